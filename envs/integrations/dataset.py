"""Task rows for a trainer's dataloader: one row per (task, seed), readable by Hugging Face
``datasets`` (``load_dataset("json", data_files=PATH)``), so a training loop can drive
``env.reset(seed=row["seed"], options={"task_id": row["task_id"]})`` deterministically.

A row holds ``env_id``, ``task_id``, ``seed``, ``split``, ``domain``, ``system_prompt``, the
opening ``prompt`` as chat messages (``[{"role": "system", ...}, {"role": "user", ...}]``, the
conversational format trainers apply their chat template to), and ``tools`` (the OpenAI function
schemas as one JSON string: schemas differ between tools, and a string keeps every row the same
Arrow type). The ``train`` split draws generated tasks from the training seeds, ``test`` is the
frozen suite; the system prompt and opening are what ``reset`` with that seed gives.

    python -m servicegym dataset --env servicegym/Delivery-v0 --split train --n 1000 --out train.jsonl
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import gymnasium as gym

from servicegym.envs.running.episodes import episode_seed
from servicegym.envs.running.vector import resolve_env_id
from servicegym.envs.tasks.sources import SPLITS

ROW_FIELDS = ("env_id", "task_id", "seed", "split", "domain", "system_prompt", "prompt", "tools")


def task_ids(env: gym.Env, split: str, n: int | None) -> list[str]:
    """The first ``n`` task ids of ``split`` (all of them for ``None``); ``train`` continues past the
    listed ids through the generator's seed range."""
    ids = env.unwrapped.task_ids(split)
    if n is None or n <= len(ids):
        return ids if n is None else ids[:n]
    make_id = getattr(env.unwrapped.source, "make_id", None)
    if split != "train" or make_id is None:
        raise ValueError(f"split {split!r} holds {len(ids)} tasks; asked for {n}")
    return [make_id("train", s) for s in range(n)]


def task_rows(env_id: str, split: str = "train", n: int | None = None, seed: int = 0,
              env_kwargs: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Rows for the first ``n`` tasks of ``split``; each row's ``seed`` is ``episode_seed(seed,
    task_id, 0)``, the seed the rollout collector gives trial 0 of that task."""
    env_id = resolve_env_id(env_id)
    if split not in SPLITS:
        raise ValueError(f"split must be 'train', 'dev' or 'test', got {split!r}")
    if n is not None and n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    env = gym.make(env_id, **(env_kwargs or {}))
    try:
        rows = []
        for tid in task_ids(env, split, n):
            s = episode_seed(seed, tid, 0)
            opening, info = env.reset(seed=s, options={"task_id": tid})
            rows.append({
                "env_id": env_id,
                "task_id": tid,
                "seed": s,
                "split": split,
                "domain": info["domain"],
                "system_prompt": info["system_prompt"],
                "prompt": [{"role": "system", "content": info["system_prompt"]}, {"role": "user", "content": opening}],
                "tools": json.dumps(info["tools"], ensure_ascii=False),
            })
        return rows
    finally:
        env.close()


def write_rows(rows: list[dict[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write rows as JSON lines (through a temporary file, so a failed write leaves no half file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    return path


def hf_dataset(rows: list[dict[str, Any]]) -> Any:
    """The rows as a ``datasets.Dataset`` (needs the ``datasets`` package: ``pip install datasets``)."""
    try:
        from datasets import Dataset
    except ImportError as err:
        raise ImportError("hf_dataset needs Hugging Face datasets: pip install datasets") from err
    return Dataset.from_list(rows)
