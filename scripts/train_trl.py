"""GRPO on a servicegym env with TRL: the env's tools (and the simulated user, as the ``respond``
tool) are the model's tools, the reward is the episode's strict success, and the score components
are logged beside it (``rewards/<key>/mean``, weight 0). Needs ``pip install -e '.[trl]'`` and a GPU
for any real model (``--vllm`` generates with vLLM colocated, if installed).

    python scripts/train_trl.py --model Qwen/Qwen2.5-0.5B-Instruct --env servicegym/Delivery-v0 \\
        --tasks 512 --max-steps 200 --eval-every 25 --eval-tasks 16 --out runs/trl

``--model`` takes a hub id or a local directory, such as the random tiny model ``servicegym
tiny-model runs/tiny`` writes (it learns nothing; a CPU check of the script). ``--eval-every N``
plays ``--eval-tasks`` tasks of ``--eval-split`` (``dev``; ``test``: the frozen suite) with the
model being trained at the start and every N steps (``servicegym.envs.integrations.trl_curve``):
``eval/success_rate`` and ``eval/rubric_fraction`` (each reward component) go to the log, the
episodes to ``OUT/curve/rollouts.jsonl`` (``servicegym report OUT/curve``: one row per step) and
the points to ``OUT/curve/curve.json``. ``--resume-from-checkpoint`` goes on from the last
checkpoint in ``--out`` (or the one given); checkpoints are written every ``--save-steps``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="Qwen/Qwen2.5-0.5B-Instruct",
                   help="a causal LM whose chat template TRL can parse tool calls from (Qwen2.5/3, Llama 3.1, ...): "
                        "a hub id or a local directory (servicegym tiny-model DIR writes a random tiny one)")
    p.add_argument("--env", default="servicegym/Delivery-v0")
    p.add_argument("--tasks", type=int, default=512, help="training tasks (rows), generated from the train seeds")
    p.add_argument("--difficulty", type=int, default=None, help="difficulty of the generated tasks (the env's default)")
    p.add_argument("--max-steps", type=int, default=200, help="optimizer steps")
    p.add_argument("--batch-size", type=int, default=8, help="per-device batch (rollouts)")
    p.add_argument("--num-generations", type=int, default=8, help="rollouts per task (the GRPO group)")
    p.add_argument("--max-completion-length", type=int, default=4096,
                   help="tokens of the whole rollout: the model's turns and the tool results")
    p.add_argument("--max-tool-calls", type=int, default=None, help="tool-calling iterations per rollout")
    p.add_argument("--lr", type=float, default=1e-6)
    p.add_argument("--vllm", action="store_true", help="generate with vLLM (colocated)")
    p.add_argument("--report-to", default="none", help="trackio, wandb, tensorboard or none")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/trl")
    p.add_argument("--save-steps", type=int, default=500, help="write a checkpoint every N steps")
    p.add_argument("--resume-from-checkpoint", nargs="?", const=True, default=None, metavar="PATH",
                   help="go on from a checkpoint: the last one in --out, or PATH")
    p.add_argument("--eval-every", type=int, default=0,
                   help="evaluate the model being trained at the start and every N steps (0: never)")
    p.add_argument("--eval-tasks", type=int, default=8, help="tasks of --eval-split evaluated each time (a fixed sample)")
    p.add_argument("--eval-split", default="dev", choices=["dev", "test"], help="the tasks evaluated (test: the frozen suite)")
    p.add_argument("--eval-max-new-tokens", type=int, default=None,
                   help="tokens of one evaluation completion (default: what is left of --max-completion-length)")
    a = p.parse_args(argv)
    for flag in ("eval_every", "eval_tasks", "save_steps"):
        if getattr(a, flag) < (0 if flag == "eval_every" else 1):
            p.error(f"--{flag.replace('_', '-')} must be {'0 or more' if flag == 'eval_every' else 'at least 1'}")
    try:
        import torch
        from trl import GRPOConfig, GRPOTrainer

        from servicegym.envs.integrations.trl import environment_factory, score_reward_funcs, trl_dataset
        from servicegym.envs.integrations.trl_curve import LearningCurveCallback
    except ImportError as err:
        print(f"error: {err}; install the extra: pip install -e '.[trl]'", file=sys.stderr)
        return 2

    if a.resume_from_checkpoint is True and not list(Path(a.out).glob("checkpoint-*")):
        print(f"error: --resume-from-checkpoint: no checkpoint-* in {a.out}", file=sys.stderr)
        return 2
    env_kwargs = {} if a.difficulty is None else {"difficulty": a.difficulty}
    dataset = trl_dataset(a.env, "train", a.tasks, a.seed, env_kwargs)
    funcs = score_reward_funcs(a.env)
    config = GRPOConfig(
        output_dir=a.out, max_steps=a.max_steps, per_device_train_batch_size=a.batch_size,
        num_generations=a.num_generations, max_completion_length=a.max_completion_length,
        max_tool_calling_iterations=a.max_tool_calls, learning_rate=a.lr, bf16=torch.cuda.is_available(),
        use_cpu=not torch.cuda.is_available(), use_vllm=a.vllm, vllm_mode="colocate",
        reward_weights=[0.0] * len(funcs), logging_steps=1, log_completions=True, report_to=a.report_to, seed=a.seed,
        save_steps=a.save_steps,
    )
    trainer = GRPOTrainer(model=a.model, args=config, train_dataset=dataset, reward_funcs=funcs,
                          environment_factory=environment_factory(a.env, **env_kwargs))
    if a.eval_every:
        LearningCurveCallback(a.env, every=a.eval_every, tasks=a.eval_tasks, split=a.eval_split, seed=a.seed,
                              env_kwargs=env_kwargs, max_new_tokens=a.eval_max_new_tokens).attach(trainer)
    trainer.train(resume_from_checkpoint=a.resume_from_checkpoint)
    trainer.save_model(a.out)
    print(f"saved to {a.out}" + (f"; learning curve in {Path(a.out) / 'curve'}" if a.eval_every else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
