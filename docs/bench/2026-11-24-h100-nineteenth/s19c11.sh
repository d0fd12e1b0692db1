#!/usr/bin/env bash
# Nineteenth session, call 11: what a tail split whose pieces take more than one round would save at the long non-causal points (the last of 15.5 waves at d128, 7.8 at d256): tilego run --splits N against 1, the sweep's best config, back to back, twice interleaved.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c11-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
one() { # label splits args...
  l=$1; n=$2; shift 2
  r=$(timeout 60 ./bin/tilego run flash-attention "$@" --splits $n --repeats 30 --json 2>&1 | tail -1)
  echo "$l splits $n: $(echo "$r" | python3 -c 'import json,sys
try:
  r=json.load(sys.stdin); print("%.4f ms %.1f TFLOP/s ok=%s %s" % (r.get("time_ms",0), r.get("tflops",0), r.get("ok"), r.get("split","")))
except Exception as e: print("no result", e)')" | tee -a $S
}
D128=(--dim 128 --layout bshd --config "m=128 n=176 stages=2 threads=256 ws=true pingpong=true overlap=true")
for round in 1 2; do
  for n in 1 3 5; do one "d128 16k" $n --batch 1 --heads 16 --seq-q 16384 "${D128[@]}"; done
  for n in 1 3 5; do one "d128 8k" $n --batch 2 --heads 16 --seq-q 8192 "${D128[@]}"; done
  for n in 1 5; do one "d256 16k" $n --batch 1 --heads 8 --seq-q 16384 --dim 256 --layout bshd --config "m=128 n=80 stages=2 threads=256 ws=true overlap=true"; done
done
