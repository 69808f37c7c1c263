"""servicegym as a NeMo-Gym resources server: the entrypoint of configs/servicegym.yaml, which
NeMo-Gym's `gym env start` runs in this directory (its uv venv from requirements.txt) with the
server's config in its environment. See servicegym.envs.integrations.nemo_gym."""

from servicegym.envs.integrations.nemo_gym import main

if __name__ == "__main__":
    raise SystemExit(main(["serve"]))
