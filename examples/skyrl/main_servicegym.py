"""SkyRL (skyrl-train) entrypoint with the servicegym envs registered.

SkyRL builds every trajectory's env with ``skyrl_gym.make(env_class, ...)`` in the Ray worker that
runs the trainer, so the ids must be registered there: importing
``servicegym.envs.integrations.skyrl`` registers ``servicegym-delivery``, ``servicegym-in-store``,
``servicegym-travel``, ``servicegym-cross-scenario``, ``servicegym-payments`` and
``servicegym-workspace``. Everything else is skyrl-train's ``main_base`` (its hydra config and
overrides); see ``run_grpo_delivery.sh``.

Needs Python 3.12+ (skyrl-train's requirement), pip install -e ".[skyrl]", and skyrl-train with its GPU
stack (vLLM); without them it exits at once with one sentence saying so.
"""

from servicegym.envs.integrations.preflight import require_skyrl_train

require_skyrl_train()  # before importing skyrl-train: one sentence instead of a ModuleNotFoundError

import hydra  # noqa: E402
import ray  # noqa: E402
from omegaconf import DictConfig  # noqa: E402
from skyrl_train.entrypoints.main_base import BasePPOExp, config_dir, validate_cfg  # noqa: E402
from skyrl_train.utils import initialize_ray  # noqa: E402


@ray.remote(num_cpus=1)
def skyrl_entrypoint(cfg: DictConfig) -> None:
    import servicegym.envs.integrations.skyrl  # noqa: F401  (registers the servicegym-* ids with skyrl_gym)

    BasePPOExp(cfg).run()


@hydra.main(config_path=config_dir, config_name="ppo_base_config", version_base=None)
def main(cfg: DictConfig) -> None:
    validate_cfg(cfg)
    initialize_ray(cfg)
    ray.get(skyrl_entrypoint.remote(cfg))


if __name__ == "__main__":
    main()
