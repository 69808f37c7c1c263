"""Tests of the natural-language rubric reader (``rewards/nl_rubric/``), one file per item kind."""
