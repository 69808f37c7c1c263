"""Checks a trainer's entry point runs before anything else: whether this interpreter and its
packages can run that trainer at all, said in one sentence (no traceback). Standard library only,
so a check works where the trainer and its extras are missing.

``skyrl_train_problem`` / ``require_skyrl_train``: skyrl-train needs Python 3.12+ and the
``skyrl_train`` package (``examples/skyrl`` calls ``require_skyrl_train`` first).
"""

from __future__ import annotations

SKYRL_TRAIN_NEEDS = ("SkyRL's trainer (skyrl-train) needs Python 3.12 or newer with skyrl-train and its GPU stack "
                     "installed (pip install 'skyrl-train[vllm]'); this is Python {python}{missing}. The env side "
                     "(servicegym.envs.integrations.skyrl with skyrl-gym) works on Python 3.10 and newer.")


def skyrl_train_problem() -> str | None:
    """Why skyrl-train's trainer cannot run in this interpreter (one sentence), or None when it can:
    it needs Python 3.12+ and the ``skyrl_train`` package."""
    import importlib.util
    import platform
    import sys

    missing = "" if importlib.util.find_spec("skyrl_train") is not None else " and skyrl-train is not installed"
    if sys.version_info >= (3, 12) and not missing:
        return None
    return SKYRL_TRAIN_NEEDS.format(python=platform.python_version(), missing=missing)


def require_skyrl_train() -> None:
    """Exit with status 2 and one sentence (no traceback) when skyrl-train cannot run here; what the
    SkyRL example calls before anything else."""
    import sys

    problem = skyrl_train_problem()
    if problem is not None:
        print(f"servicegym: {problem}", file=sys.stderr)
        raise SystemExit(2)
