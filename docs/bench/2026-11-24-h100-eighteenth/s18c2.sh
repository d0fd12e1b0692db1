#!/usr/bin/env bash
# Eighteenth session, call 2: the last-wave check with cuDNN timed back to back (batch 32 vs 33 at 512 tokens); tilego tune at the 512 points with the walks in its space and seeds (budget 100 s each), then run picking the winner; the autotune GPU tests.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
t0=$(date +%s); timeout 120 ./bin/autotune.test -test.v > /tmp/at.log 2>&1
echo "autotune tests: exit $? $(grep -c -- '--- PASS' /tmp/at.log) pass $(grep -c -- '--- FAIL' /tmp/at.log) fail ($(( $(date +%s) - t0 )) s)" | tee -a $S
cat > /tmp/cudnn_time.py <<'PY'
import sys, torch
from torch.nn.attention import SDPBackend, sdpa_kernel
b, h, s, d, causal = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == '1'
q, k, v = (torch.randn(b, s, h, d, dtype=torch.bfloat16, device='cuda').transpose(1, 2) for _ in range(3))
f = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
    for _ in range(20): f()
    torch.cuda.synchronize()
    best = 1e9
    for rep in range(5):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(30): f()
        e1.record(); torch.cuda.synchronize(); best = min(best, e0.elapsed_time(e1) / 30)
fl = 4 * b * h * s * s * d / (2 if causal else 1)
print('%.4f ms %.1f TF' % (best, fl / best / 1e9))
PY
q() { # dim heads causal config
  for b in 32 33 32 33; do
    c=""; [ "$3" = 1 ] && c="--causal"
    t=$(./bin/tilego run flash-attention --batch $b --heads $2 --seq-q 512 --dim $1 --layout bshd $c --config "$4" --repeats 100 --json 2>&1 | python3 -c 'import json,sys; x=json.loads(sys.stdin.read()); print("%.4f ms %.1f TF ok=%s" % (x.get("time_ms",0), x.get("tflops",0), x.get("ok")))' 2>&1 | tail -1)
    p=$(python3 /tmp/cudnn_time.py $b $2 512 $1 $3 2>&1 | tail -1)
    echo "d$1 c$3 b$b h$2: tilego $t | cudnn $p" | tee -a $S
  done
}
q 128 16 0 "m=128 n=128 stages=2 threads=256 ws=true pingpong=true overlap=true persistent=true"
q 128 16 1 "m=128 n=128 stages=2 threads=256 ws=true pingpong=true overlap=true persistent=true"
q 256 8 0 "m=128 n=64 stages=2 threads=256 ws=true pingpong=true overlap=true direct=true persistent=true"
q 64 32 0 "m=128 n=128 stages=3 threads=256 ws=true pingpong=true overlap=true direct=true persistent=true"
tc=/tmp/tune-cache; rm -rf $tc
for shape in "--batch 32 --heads 16 --dim 128" "--batch 32 --heads 16 --dim 128 --causal" "--batch 32 --heads 8 --dim 256"; do
  args=(flash-attention $shape --seq-q 512 --layout bshd)
  t0=$(date +%s)
  TILEGO_CACHE=$tc timeout 150 ./bin/tilego tune "${args[@]}" --budget 100s --patience 40 > /tmp/tune.log 2>&1
  echo "tune $shape: exit $? ($(( $(date +%s) - t0 )) s)" | tee -a $S
  grep -v '^\s*$' /tmp/tune.log | head -20 | tee -a $S
  TILEGO_CACHE=$tc ./bin/tilego run "${args[@]}" --repeats 100 2>&1 | tail -4 | tee -a $S
done
