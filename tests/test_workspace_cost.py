"""A reset of the Workspace env to a new generated task draws its data files but makes them later
(issue 29): counted and compared, never timed.

* A record's draws (``content_workspace.Draw``: ``pick``, ``between``, ``uniform``) take the very
  values and stream the ``rng.choice``/``randint``/``randrange``/``uniform`` calls of the record
  makers they replace take (kept here as the reference), for ``TaskRandom`` and a plain
  ``random.Random``; ``value_metric`` of the drawn values is ``metric`` of the row they make.
* A reset to a new task makes no data file and no skill file (the files table is made on its
  first read, ``EpisodeDraft.table_rows``) and no batch's records but those its first session
  reads; the files, records and task made later are those of the task built at once.
* ``skill_index`` is ``build_skills`` without the files.
"""

from __future__ import annotations

import random
from typing import Any

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
import servicegym.envs.tasks.generators.workspace as ws_gen
import servicegym.envs.tasks.generators.workspace_skills as ws_skills
from servicegym.envs.tasks.generators import content_workspace as cw
from servicegym.envs.tasks.generators.common import TaskRandom
from servicegym.envs.tasks.generators.workspace import Episode, generate_workspace_task, lazy_episode
from servicegym.world_state.workspace import skill_library

ENV_ID = "servicegym/Workspace-v0"


# ----- the record makers the draws replace (the reference) -----------------------------------------
def _run(rng: random.Random, key: str, cat: str) -> dict[str, str]:
    models = ("tiny-mixer", "wide-conv", "deep-gru", "sparse-attn", "residual-mlp", "graph-lite", "dual-encoder")
    acc = rng.uniform(0.61, 0.95)
    return {"run_id": key, "model": rng.choice(models), "dataset": cat, "accuracy": f"{acc:.4f}",
            "loss": f"{rng.uniform(0.15, 1.4):.3f}"}


def _campaign(rng: random.Random, key: str, cat: str) -> dict[str, str]:
    names = ("Spring launch", "Loyalty push", "Back to work", "Weekend flash", "City pop-up", "Referral drive", "Holiday teaser")
    spend = rng.randrange(800, 9000) + rng.choice((0, 0.5, 0.25))
    conv = rng.randrange(12, 400)
    return {"campaign_id": key, "name": rng.choice(names), "channel": cat, "spend": f"{spend:.2f}", "conversions": str(conv)}


def _contract(rng: random.Random, key: str, cat: str) -> dict[str, str]:
    parties = ("Halvorsen Freight", "Quill & Ivy Ltd", "Marrow Systems", "Eastgate Properties", "Lumina Data", "Orchid Foods",
               "Tallis Engineering")
    value = 0 if cat == "NDA" else rng.randrange(6, 240) * 1000
    month = rng.randint(1, 12)
    return {"contract_id": key, "counterparty": rng.choice(parties), "type": cat, "value": str(value),
            "renewal": f"2027-{month:02d}-{rng.randint(1, 28):02d}"}


def _prescription(rng: random.Random, key: str, cat: str) -> dict[str, str]:
    dose = rng.choice((2.5, 5, 10, 20, 40, 250, 500))
    return {"rx_id": key, "patient": f"{rng.choice('ABCDEFGHJKLMNPRST')}.{rng.choice('ABCDEFGHJKLMNPRST')}.",
            "drug": rng.choice(cw._DRUGS[cat]), "drug_class": cat, "dose_mg": f"{dose:g}", "doses_per_day": str(rng.choice((1, 2, 3)))}


def _holding(rng: random.Random, key: str, cat: str) -> dict[str, str]:
    names = ("Corvid Energy", "Pellucid Power", "Marlow Software", "Quanta Health", "Brisk Retail", "Ostra Utilities",
             "Helix Robotics", "Cedar Grocers")
    cost = rng.uniform(12, 180)
    price = cost * rng.uniform(0.78, 1.35)
    return {"ticker": key, "company": rng.choice(names), "sector": cat, "price": f"{price:.2f}", "cost": f"{cost:.2f}"}


REFERENCE = {"researcher": _run, "marketer": _campaign, "legal": _contract, "pharmacist": _prescription, "analyst": _holding}


@pytest.mark.parametrize("persona", cw.PERSONA_ORDER)
@pytest.mark.parametrize("make_rng", [lambda s: TaskRandom(f"cost/{s}"), lambda s: random.Random(s)], ids=["task", "plain"])
def test_record_draws_are_the_record_makers(persona: str, make_rng: Any) -> None:
    p = cw.PERSONA_CONTENT[persona]
    reference = REFERENCE[persona]
    for seed in range(40):
        a, b = make_rng(seed), make_rng(seed)
        for i in range(30):
            cat = p.categories[i % len(p.categories)]
            row = p.make_record(a, f"K{i}", cat)
            assert row == reference(b, f"K{i}", cat)
            assert list(row) == list(p.columns) or set(row) == set(p.columns)
        assert a.getstate() == b.getstate()  # the same stream after
        # a keyed draw: the key's step first, then the record's values
        if p.key_prefix:
            a, b = make_rng(seed), make_rng(seed)
            values = cw.draw_values(a, p.keyed_draws[p.categories[1]])
            assert values[0] == b.randint(1, 4) and p.row("K", p.categories[1], values[1:]) == reference(b, "K", p.categories[1])


@pytest.mark.parametrize("persona", cw.PERSONA_ORDER)
def test_value_metric_is_the_metric_of_the_row(persona: str) -> None:
    p = cw.PERSONA_CONTENT[persona]
    rng = random.Random(persona)
    for i in range(3000):
        cat = p.categories[i % len(p.categories)]
        values = cw.draw_values(rng, p.draws[cat])
        assert p.value_metric(cat, values) == p.metric(p.row("K", cat, values))


def test_draw_specs_are_the_calls_they_name() -> None:
    rng_a, rng_b = random.Random(5), random.Random(5)
    draws = (cw.pick("abc"), cw.between(3, 17), cw.uniform(1.5, 2.25), cw.pick((7,)), cw.between(0, 0))
    got = [cw.draw_values(rng_a, draws) for _ in range(200)]
    want = [[rng_b.choice("abc"), rng_b.randint(3, 17), rng_b.uniform(1.5, 2.25), rng_b.choice((7,)), rng_b.randrange(0, 1)]
            for _ in range(200)]
    assert got == want and rng_a.getstate() == rng_b.getstate()


def _whole(task_seed: int) -> dict[str, Any]:
    data = generate_workspace_task(task_seed, violations=True).model_dump(mode="json")
    data["violations"] = {}
    del data["world"]["generic_actions"]
    return data


def test_reset_makes_no_file_and_the_files_made_later_are_the_whole_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    for d in (0, 1, 2):
        ws_gen._probe(d)
    made = {"files": 0, "skills": 0}
    file_rows, build_skills = ws_gen.file_rows, ws_skills.build_skills

    def counted_files(ep: Any) -> Any:
        made["files"] += 1
        return file_rows(ep)

    def counted_skills(c: Any) -> Any:
        made["skills"] += 1
        return build_skills(c)

    monkeypatch.setattr(ws_gen, "file_rows", counted_files)
    monkeypatch.setattr(ws_skills, "build_skills", counted_skills)
    env = gym.make(ENV_ID)
    for seed in range(60_000, 60_010):
        env.reset(seed=seed)
        u = env.unwrapped
        draft = lazy_episode(u.task)
        assert draft is not None
        assert made == {"files": 0, "skills": 0}  # no file made by the reset
        assert len(draft.ep.batches.drawn) == 9 and len(draft.ep.batches._made) <= 1  # only session 1's records
        files = {f.path: f.content for f in u.world.tables["files"]}  # the files table read: made now
        assert made == {"files": 1, "skills": 1}
        dumped = u.task.model_dump(mode="json")  # the task read whole
        assert made == {"files": 1, "skills": 1}  # made once
        whole = _whole(int(u.task.task_id.split("/")[2]))
        assert files == {f["path"]: f["content"] for f in whole["world"]["tables"]["files"]}
        assert dumped == whole  # the task built at once
        made.update(files=0, skills=0)


def test_the_task_read_whole_before_its_files_table_is_the_whole_task() -> None:
    for d in (0, 1, 2):
        ws_gen._probe(d)
    for seed in range(30):
        task = generate_workspace_task(seed, violations=False)
        draft = lazy_episode(task)
        assert draft is not None and draft.tables["files"] == []  # (made on first read)
        assert task.model_dump(mode="json") == _whole(seed)


def test_batches_make_each_batchs_records_once_from_its_draws() -> None:
    ep = Episode("pharmacist", 3, 1, "train")
    ep.begin()
    assert len(ep.batches) == 9 and list(ep.batches) == list(range(1, 10)) and not ep.batches._made
    rows = ep.batches[4]
    assert ep.batches[4] is rows and list(ep.batches._made) == [4]
    assert [r["rx_id"] for r in rows] == [key for key, _c, _v in ep.batches.drawn[4]]
    with pytest.raises(KeyError):
        ep.batches[10]


@pytest.mark.parametrize("persona", cw.PERSONA_ORDER)
def test_skill_index_is_build_skills_without_files(persona: str) -> None:
    ep = Episode(persona, 11, 1, "train")
    ep.begin()
    c = ws_skills.context(ep, f"{persona}/train/11/d1")
    assert skill_library.skill_index(c) == [{k: v for k, v in s.items() if k != "files"} for s in skill_library.build_skills(c)]
