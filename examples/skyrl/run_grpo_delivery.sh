#!/usr/bin/env bash
# GRPO on servicegym/Delivery-v0 with SkyRL (skyrl-train; one node, 4 GPUs, colocated vLLM).
# Needs Python 3.12+ (skyrl-train's requirement), pip install -e ".[skyrl]" and skyrl-train with vLLM
# (pip install "skyrl-train[vllm]"); the first line checks both and stops with one sentence if not.
set -euo pipefail
cd "$(dirname "$0")/../.."
python -c "from servicegym.envs.integrations.preflight import require_skyrl_train; require_skyrl_train()"

DATA=${DATA:-$HOME/data/servicegym}
MODEL=${MODEL:-Qwen/Qwen2.5-7B-Instruct}
NUM_GPUS=${NUM_GPUS:-4}

# rows: prompt (system + opening), env_class (servicegym-delivery), task_id, seed, ... (the rest
# reaches the env as extras, which pick the task and seed of each trajectory)
python -m servicegym.envs.integrations.skyrl --env servicegym/Delivery-v0 --split train --n 4096 --out "$DATA/delivery_train.json"
python -m servicegym.envs.integrations.skyrl --env servicegym/Delivery-v0 --split test --out "$DATA/delivery_test.json"

# Multi-turn: the env's observations are chat messages (tool results, the user's reply), so the
# generator keeps the conversation format (use_conversation_multi_turn) and runs one agent loop per
# trajectory (batched=false). max_turns becomes the env's step limit: the last turn is scored.
# The system prompt carries the 20 tool schemas (about 4k Qwen tokens).
python examples/skyrl/main_servicegym.py \
  data.train_data="['$DATA/delivery_train.json']" \
  data.val_data="['$DATA/delivery_test.json']" \
  environment.env_class=servicegym-delivery \
  generator.max_turns=30 \
  generator.batched=false \
  generator.use_conversation_multi_turn=true \
  generator.n_samples_per_prompt=8 \
  generator.sampling_params.max_generate_length=1024 \
  generator.max_input_length=24576 \
  trainer.max_prompt_length=6144 \
  trainer.algorithm.advantage_estimator=grpo \
  trainer.policy.model.path="$MODEL" \
  trainer.placement.colocate_all=true \
  trainer.strategy=fsdp2 \
  trainer.placement.policy_num_gpus_per_node=$NUM_GPUS \
  trainer.placement.ref_num_gpus_per_node=$NUM_GPUS \
  generator.inference_engine.num_engines=$NUM_GPUS \
  generator.inference_engine.tensor_parallel_size=1 \
  generator.inference_engine.backend=vllm \
  generator.inference_engine.run_engines_locally=true \
  generator.inference_engine.async_engine=true \
  trainer.train_batch_size=64 \
  trainer.policy_mini_batch_size=16 \
  trainer.policy.optimizer_config.lr=1.0e-6 \
  trainer.epochs=1 \
  trainer.eval_interval=10 \
  trainer.logger=console \
  trainer.project_name=servicegym \
  trainer.run_name=delivery_grpo \
  "$@"
