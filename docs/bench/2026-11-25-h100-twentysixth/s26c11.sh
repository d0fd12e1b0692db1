#!/usr/bin/env bash
# Twenty-sixth session, call 11: FlashAttention's output stores with an L2 evict-first hint (an experiment switch,
# TILEGO_OHINT=1: persistent walks that store O from registers) against without, back to back, four rounds, at the
# sweep's d256 and d64 points of 512 and 1k tokens with the bench's picks of the last sweeps. Not kept; the switch is gone.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c11-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
c256="m=128 n=64 stages=2 threads=256 ws=true pingpong=true overlap=true direct=true persistent=true"
c64="m=128 n=128 stages=3 threads=256 ws=true pingpong=true overlap=true direct=true persistent=true"
r() { local h=$1 chk=$2; shift 2
  TILEGO_OHINT=$h timeout 60 ./bin/tilego run flash-attention --layout bshd --repeats 30 --json --check=$chk "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('hint=%s ms %.4f TFLOP/s %.1f ok %s' % ('$h', r['time_ms'], r.get('tflops', 0), r.get('ok')))" 2>&1 || echo "hint=$h failed: $(tail -2 /tmp/r.err)"; }
for sh in "--batch 32 --heads 8 --seq-q 512 --dim 256 --causal|$c256" "--batch 32 --heads 8 --seq-q 512 --dim 256|$c256" \
  "--batch 16 --heads 8 --seq-q 1024 --dim 256 --causal|$c256" "--batch 16 --heads 8 --seq-q 1024 --dim 256|$c256" \
  "--batch 32 --heads 32 --seq-q 512 --dim 64|$c64" "--batch 16 --heads 32 --seq-q 1024 --dim 64|$c64"; do
  args=${sh%|*}; cfg=${sh#*|}
  echo "== $args" | tee -a $S
  for i in 1 2 3 4; do chk=false; [ $i = 1 ] && chk=true
    # shellcheck disable=SC2086
    r 0 $chk $args --config "$cfg" | tee -a $S; r 1 $chk $args --config "$cfg" | tee -a $S
  done
done
