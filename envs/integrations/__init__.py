"""Adapters to other libraries, each behind an optional extra imported only when used:
stable-baselines3 (``sb3``: a tool-menu action space with masks and a feature observation,
extra ``rl``); task rows for a trainer's dataloader (``dataset``); the LLM-trainer adapters: TRL's
``environment_factory`` (``trl``; learning curves while training: ``trl_curve``; a tiny random chat
model for CPU runs: ``tiny_model``), verl's agent loop (``verl``), SkyRL-Gym's ``BaseTextEnv``
(``skyrl``), a verifiers taskset plugin (``verifiers``, extra ``verifiers``), one async rollout function for gateway-style trainers such as ART and AReaL
(``rollout``); and the OpenEnv-compatible environment server with its clients (``openenv``, extra
``server``)."""
