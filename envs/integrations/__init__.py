"""Adapters to other libraries: stable-baselines3 (``sb3``: a tool-menu action space with masks
and a feature observation). Each adapter's heavy dependency is an optional extra, imported only
when the adapter is used."""
