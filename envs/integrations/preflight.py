"""Checks a trainer's entry point runs before anything else: whether this interpreter and its
packages can run that trainer at all, said in one sentence (no traceback). Standard library only,
so a check works where the trainer and its extras are missing.

``skyrl_train_problem`` / ``require_skyrl_train``: skyrl-train needs Python 3.12+ and the
``skyrl_train`` package (``examples/skyrl`` calls ``require_skyrl_train`` first).

``verl_trainer_problem`` / ``require_verl_trainer``: verl's trainer needs a CUDA GPU and vLLM or
SGLang (``examples/verl/run_grpo_delivery.sh`` calls ``require_verl_trainer`` first).

``nemo_gym_problem`` / ``require_nemo_gym``: NeMo-Gym's resources server needs Python 3.12+ and
the ``nemo_gym`` package (``python -m servicegym.envs.integrations.nemo_gym serve`` calls
``require_nemo_gym`` first).
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
    _stop_if(skyrl_train_problem())


NEMO_GYM_NEEDS = ("NeMo-Gym's resources server needs Python 3.12 or newer with nemo-gym installed (in a Python 3.12 "
                  "environment: pip install 'nemo-gym>=0.4' and servicegym); this is Python {python}{missing}. The "
                  "env side (servicegym.envs.integrations.nemo_gym's sessions, tool routing, verify and rows) works "
                  "on Python 3.10 and newer.")


def nemo_gym_problem() -> str | None:
    """Why NeMo-Gym's resources server cannot run in this interpreter (one sentence), or None when
    it can: it needs Python 3.12+ and the ``nemo_gym`` package."""
    import importlib.util
    import platform
    import sys

    missing = "" if importlib.util.find_spec("nemo_gym") is not None else " and nemo-gym is not installed"
    if sys.version_info >= (3, 12) and not missing:
        return None
    return NEMO_GYM_NEEDS.format(python=platform.python_version(), missing=missing)


def require_nemo_gym() -> None:
    """Exit with status 2 and one sentence (no traceback) when NeMo-Gym cannot run here; what the
    adapter's ``serve`` calls before anything else."""
    _stop_if(nemo_gym_problem())


VERL_TRAINER_NEEDS = ("verl's trainer needs a CUDA GPU and verl's rollout stack (pip install 'verl[vllm]' or verl's "
                      "Docker image); this machine has {missing}. The agent loop itself "
                      "(servicegym.envs.integrations.verl) and its rows work on CPU.")


def verl_trainer_problem() -> str | None:
    """Why verl's GRPO trainer cannot run here (one sentence), or None when it can: it needs a CUDA
    GPU (torch sees one) and vLLM or SGLang for its rollouts."""
    import importlib
    import importlib.util

    missing = []
    gpu = False
    if importlib.util.find_spec("torch") is not None:
        try:
            gpu = bool(importlib.import_module("torch").cuda.is_available())
        except Exception:  # noqa: BLE001  a broken CUDA install is no GPU to verl either
            gpu = False
    if not gpu:
        missing.append("no CUDA GPU")
    if importlib.util.find_spec("vllm") is None and importlib.util.find_spec("sglang") is None:
        missing.append("neither vLLM nor SGLang")
    return VERL_TRAINER_NEEDS.format(missing=" and ".join(missing)) if missing else None


def require_verl_trainer() -> None:
    """Exit with status 2 and one sentence (no traceback) when verl's trainer cannot run here; what
    ``examples/verl/run_grpo_delivery.sh`` calls before anything else."""
    _stop_if(verl_trainer_problem())


def _stop_if(problem: str | None) -> None:
    """Exit with status 2 and the one sentence ``problem`` on standard error (no traceback)."""
    import sys

    if problem is not None:
        print(f"servicegym: {problem}", file=sys.stderr)
        raise SystemExit(2)
