"""Running envs: reference policies (``policies``: oracle, random, and ``run_episode``), the LLM
agent policy (``llm_policy``), the episode worker every backend shares (``episodes``), the
rollout collector with resume (``rollouts``) and its Ray backend (``ray_backend``), and vector-env
helpers (``vector``)."""
