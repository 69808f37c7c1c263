"""Scoring: rubric items checked by code, order matching for VitaBench tasks, the sliding-window
LLM judge, metrics and reward wrappers.

The built-in checks (life-service, scoring modes, VitaBench: ``life_service``, ``scoring_modes``,
``vitabench``) register themselves on the first read of ``CHECKS`` (``rubric._load_builtin``),
not when this package is imported: the rubric reader they use takes about 0.45 s to import."""

from servicegym.rewards.judge import JudgeItem, JudgeResult, LLMJudgeFn, SlidingWindowJudge, window_bounds
from servicegym.rewards.metrics import (
    avg_at_k,
    bootstrap_ci,
    cohen_kappa,
    judge_agreement,
    metric_table,
    pass_at_k,
    pass_hat_k,
    report,
    summarize,
)
from servicegym.rewards.rubric import CHECKS, EpisodeView, RubricItem, check, evaluate, score_rubric
from servicegym.rewards.wrappers import (
    CustomReward,
    PartialCreditReward,
    PotentialShapingReward,
    StrictSuccessReward,
    ToolErrorPenalty,
    TurnPenalty,
    rubric_progress,
)

__all__ = [
    "CHECKS", "EpisodeView", "RubricItem", "check", "evaluate", "score_rubric",
    "pass_at_k", "pass_hat_k", "summarize",
    "avg_at_k", "bootstrap_ci", "cohen_kappa", "judge_agreement", "metric_table", "report",
    "JudgeItem", "JudgeResult", "LLMJudgeFn", "SlidingWindowJudge", "window_bounds",
    "CustomReward", "PartialCreditReward", "PotentialShapingReward", "StrictSuccessReward", "ToolErrorPenalty",
    "TurnPenalty", "rubric_progress",
]
