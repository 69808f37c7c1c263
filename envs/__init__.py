"""servicegym's Gymnasium surface. Importing it registers the environment ids."""

from gymnasium.envs.registration import register, registry

ENV_IDS = {
    "servicegym/Delivery-v0": "envs.delivery:DeliveryEnv",
    "servicegym/InStore-v0": "envs.instore:InStoreEnv",
    "servicegym/Travel-v0": "envs.travel:TravelEnv",
    "servicegym/CrossScenario-v0": "envs.cross:CrossScenarioEnv",
    "servicegym/Payments-v0": "envs.payments:PaymentsEnv",
    "servicegym/Workspace-v0": "envs.workspace:WorkspaceEnv",
}

for _id, _entry in ENV_IDS.items():
    if _id not in registry:
        register(id=_id, entry_point=_entry, disable_env_checker=True)

from .base import ToolUseEnv  # noqa: E402
from .tasks import Task, TaskFileError, load_task_file  # noqa: E402

__all__ = ["ENV_IDS", "ToolUseEnv", "Task", "TaskFileError", "load_task_file"]
