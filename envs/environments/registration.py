"""The Gymnasium ids of servicegym and their entry points (strings, so ``gymnasium.make``,
``make_vec``, subprocess and Ray workers resolve them by import). Importing this module registers
them once per process; ``import servicegym`` does it for the user."""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

ENV_IDS = {
    "servicegym/Delivery-v0": "servicegym.envs.environments.delivery:DeliveryEnv",
    "servicegym/InStore-v0": "servicegym.envs.environments.instore:InStoreEnv",
    "servicegym/Travel-v0": "servicegym.envs.environments.travel:TravelEnv",
    "servicegym/CrossScenario-v0": "servicegym.envs.environments.cross:CrossScenarioEnv",
    "servicegym/Payments-v0": "servicegym.envs.environments.payments:PaymentsEnv",
    "servicegym/Workspace-v0": "servicegym.envs.environments.workspace:WorkspaceEnv",
}

for _id, _entry in ENV_IDS.items():
    if _id not in registry:
        register(id=_id, entry_point=_entry, disable_env_checker=True)
