#!/usr/bin/env bash
# GRPO on servicegym/Delivery-v0 with verl's agent loop (one node, 8 GPUs, vLLM rollout).
# Needs: pip install -e ".[verl]" and verl's GPU stack (pip install "verl[vllm]" or its Docker image).
# The first line checks for both and stops with one sentence if either is missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
python -c "from servicegym.envs.integrations.preflight import require_verl_trainer; require_verl_trainer()"
ROOT=$(pwd)  # absolute paths: Ray workers on other nodes may start elsewhere

DATA=${DATA:-$HOME/data/servicegym}
MODEL=${MODEL:-Qwen/Qwen2.5-7B-Instruct}   # hermes <tool_call> format; model_type qwen2

# dataset rows: env_id, task_id, seed, prompt (system + opening), tools, agent_name, data_source
python -m servicegym.envs.integrations.verl --env servicegym/Delivery-v0 --split train --n 4096 --out "$DATA/delivery_train.jsonl"
python -m servicegym.envs.integrations.verl --env servicegym/Delivery-v0 --split test --out "$DATA/delivery_test.jsonl"

# The prompt holds the tool schemas (20 delivery tools: 13k characters of JSON), so the prompt and
# response lengths are larger than verl's defaults; the reward comes from the loop (rm_scores),
# so no reward function is configured.
python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_files="$DATA/delivery_train.jsonl" \
    data.val_files="$DATA/delivery_test.jsonl" \
    data.train_batch_size=64 \
    data.max_prompt_length=6144 \
    data.max_response_length=10240 \
    data.filter_overlong_prompts=False \
    data.return_raw_chat=True \
    actor_rollout_ref.model.path="$MODEL" \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \
    actor_rollout_ref.actor.use_kl_loss=False \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.mode=async \
    actor_rollout_ref.rollout.n=8 \
    actor_rollout_ref.rollout.multi_turn.format=hermes \
    actor_rollout_ref.rollout.agent.agent_loop_config_path="$ROOT/examples/verl/servicegym_agent_loop.yaml" \
    actor_rollout_ref.rollout.agent.default_agent_loop=servicegym \
    trainer.n_gpus_per_node=8 \
    trainer.nnodes=1 \
    trainer.project_name=servicegym \
    trainer.experiment_name=delivery-grpo \
    trainer.total_epochs=1 "$@"
