#!/usr/bin/env bash
# Eighteenth session, call 8: longer searches (150 s each, no early stop) of tilego tune's space, persistent walks included, at the sweep's 512-token points still under cuDNN (d256, d256 causal, d128 causal).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c8-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
tc=/tmp/tune-cache8; rm -rf $tc
for shape in "--batch 32 --heads 8 --dim 256" "--batch 32 --heads 8 --dim 256 --causal" "--batch 32 --heads 16 --dim 128 --causal"; do
  args=(flash-attention $shape --seq-q 512 --layout bshd)
  t0=$(date +%s)
  TILEGO_CACHE=$tc timeout 175 ./bin/tilego tune "${args[@]}" --budget 150s --patience 0 > /tmp/tune.log 2>&1
  echo "tune $shape: exit $? ($(( $(date +%s) - t0 )) s)" | tee -a $S
  grep -v '^\s*$' /tmp/tune.log | sed -n 3,14p | tee -a $S
done
