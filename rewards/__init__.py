"""Scoring: rubric items checked by code, order matching for VitaBench tasks, and metrics."""

from . import life_service, vitabench  # noqa: F401  register the life-service and VitaBench order-matching checks
from .metrics import pass_at_k, pass_hat_k, summarize
from .rubric import CHECKS, EpisodeView, RubricItem, check, evaluate, score_rubric

__all__ = [
    "CHECKS", "EpisodeView", "RubricItem", "check", "evaluate", "score_rubric",
    "pass_at_k", "pass_hat_k", "summarize",
]
