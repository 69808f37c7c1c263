"""The three splits: ``train``, ``dev`` and ``test`` everywhere a split is chosen; ``dev`` has the
test suite's shape and none of its (or train's) tasks; the commands' defaults and summary lines."""

from __future__ import annotations

import json
from collections import Counter

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
from servicegym.envs.cli.main import build_parser, main
from servicegym.envs.integrations.dataset import task_rows

GENERATED = ["servicegym/Delivery-v0", "servicegym/InStore-v0", "servicegym/Travel-v0",
             "servicegym/CrossScenario-v0", "servicegym/Payments-v0", "servicegym/Workspace-v0"]


def _difficulty(task_id: str) -> str:
    return task_id.rsplit("/", 1)[-1]


@pytest.mark.parametrize("env_id", GENERATED)
def test_dev_mirrors_the_test_suite_in_size_and_difficulty_and_shares_no_task(env_id):
    env = gym.make(env_id, split="dev")
    base = env.unwrapped
    dev, test = base.task_ids("dev"), base.task_ids("test")
    assert len(dev) == len(test) and all("/dev/" in t for t in dev)
    assert Counter(map(_difficulty, dev)) == Counter(map(_difficulty, test))
    assert not set(dev) & set(test) and not set(dev) & set(base.task_ids("train"))
    # the same seed and difficulty under another split is another task (its own stream)
    first_dev, first_test = base.source.get(dev[0]), base.source.get(test[0])
    assert first_dev.user.opening != first_test.user.opening or first_dev.world != first_test.world
    _, info = env.reset(seed=3)  # make(split="dev") samples from dev
    assert "/dev/" in info["task_id"] and info["task_id"] in set(dev)
    _, info = env.reset(seed=3, options={"split": "test"})
    assert info["task_id"] in set(test)
    env.close()


def test_an_unknown_split_is_a_clear_error_naming_all_three():
    with pytest.raises(ValueError, match="'train', 'dev' or 'test'"):
        gym.make("servicegym/Delivery-v0", split="validation")
    with pytest.raises(ValueError, match="'train', 'dev' or 'test'"):
        task_rows("servicegym/Delivery-v0", split="val", n=1)


def test_dataset_rows_of_dev_are_dev_tasks():
    rows = task_rows("servicegym/Delivery-v0", split="dev", n=3)
    assert [r["task_id"] for r in rows] == ["delivery/dev/0/d0", "delivery/dev/1/d1", "delivery/dev/2/d2"]
    assert {r["split"] for r in rows} == {"dev"}


def test_every_command_with_a_split_offers_dev_and_the_defaults_are_safe():
    parser = build_parser()
    defaults = {}
    for command in ("rollout", "evaluate", "play", "dataset", "loopback-model"):
        argv = [command] + (["--out", "x.jsonl"] if command in ("rollout", "dataset") else [])
        defaults[command] = parser.parse_args(argv).split
        assert parser.parse_args([*argv, "--split", "dev"]).split == "dev"
    # collecting for fine-tuning must not read the frozen suite unless asked; evaluation scores on it
    assert defaults == {"rollout": "train", "evaluate": "test", "play": "test", "dataset": "train",
                        "loopback-model": "test"}


def test_the_summary_line_names_the_split_actually_used(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    assert main(["rollout", "--policy", "oracle", "--limit", "2", "--quiet", "--out", str(out)]) == 0
    line = capsys.readouterr().out
    assert "split=train tasks=2" in line
    assert [json.loads(x)["task_id"] for x in out.read_text().splitlines()] == ["delivery/train/0/d2",
                                                                                  "delivery/train/1/d2"]
    assert main(["rollout", "--policy", "oracle", "--split", "dev", "--limit", "2", "--quiet",
                 "--out", str(tmp_path / "d.jsonl")]) == 0
    assert "split=dev tasks=2" in capsys.readouterr().out
    assert main(["evaluate", "--policy", "oracle", "--task-ids", "delivery/dev/5/d5", "--quiet",
                 "--out", str(tmp_path / "ev")]) == 0
    assert "split=custom tasks=1" in capsys.readouterr().out
