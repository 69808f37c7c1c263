"""Running envs: reference policies (``policies``: oracle, random, and ``run_episode``), the LLM
agent policy (``llm_policy``), the episode worker every backend shares (``episodes``), the
rollout collector with resume (``rollouts``; its records file in ``rollout_records``, its thread,
async and process backends in ``rollout_backends``) and its Ray backend (``ray_backend``), and
vector-env helpers (``vector``)."""
