#!/usr/bin/env bash
# Eighteenth session, call 1: d64 512-2k with 256-row blocks in the short list, with peers; the last-wave quantization check (batch 32 vs 33 at 512 tokens, tilego's best config against cuDNN).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
cat > /tmp/cudnn_time.py <<'PY'
import sys, torch, statistics
from torch.nn.attention import SDPBackend, sdpa_kernel
b, h, s, d, causal = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == '1'
q, k, v = (torch.randn(b, s, h, d, dtype=torch.bfloat16, device='cuda').transpose(1, 2) for _ in range(3))
f = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
    for _ in range(10): f()
    ts = []
    for _ in range(50):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(); f(); e1.record(); torch.cuda.synchronize(); ts.append(e0.elapsed_time(e1))
ms = statistics.median(ts)
fl = 4 * b * h * s * s * d / (2 if causal else 1)
print('%.4f ms %.1f TF' % (ms, fl / ms / 1e9))
PY
q() { # dim heads causal config
  for b in 32 33 32 33; do
    c=""; [ "$3" = 1 ] && c="--causal"
    t=$(./bin/tilego run flash-attention --batch $b --heads $2 --seq-q 512 --dim $1 --layout bshd $c --config "$4" --repeats 50 --json 2>&1 | python3 -c 'import json,sys; x=json.loads(sys.stdin.read()); print("%.4f ms %.1f TF ok=%s" % (x.get("time_ms",0), x.get("tflops",0), x.get("ok")))' 2>&1 | tail -1)
    p=$(python3 /tmp/cudnn_time.py $b $2 512 $1 $3 2>&1 | tail -1)
    echo "d$1 c$3 b$b h$2: tilego $t | cudnn $p" | tee -a $S
  done
}
q 128 16 0 "m=128 n=128 stages=2 threads=256 ws=true pingpong=true overlap=true persistent=true"
q 128 16 1 "m=128 n=128 stages=2 threads=256 ws=true pingpong=true overlap=true persistent=true"
q 256 8 0 "m=128 n=64 stages=2 threads=256 ws=true pingpong=true overlap=true direct=true persistent=true"
q 64 32 0 "m=128 n=128 stages=3 threads=256 ws=true pingpong=true overlap=true direct=true persistent=true"
OUT=/tmp/c1 TESTS=0 SUITES=fa-sweep SHAPE='seq_q=(512|1024|2048) .*dim=64 ' timeout 400 bash scripts/gpu-suite.sh run > /tmp/c1-suite.log 2>&1
echo "d64 short sweep with peers: exit $?" | tee -a $S
cp /tmp/c1/table.txt $OUT/c1-table.txt; cp /tmp/c1/tilego.jsonl $OUT/c1-tilego.jsonl; cp /tmp/c1/peers.jsonl $OUT/c1-peers.jsonl
tail -3 /tmp/c1-suite.log
python3 - $OUT/c1-tilego.jsonl <<'PY' | tee -a $S
import json, sys
for l in open(sys.argv[1]):
    x = json.loads(l); s = x['shape']
    tr = sorted(x['tried'], key=lambda t: t.get('ms') or 1e9)
    best = tr[0]['ms']
    print('d%d %s %d: best %.1f TF %s' % (s['dim'], 'c' if s['causal'] else '-', s['seq_q'], x['tflops'], x['config']))
    for t in tr[:5]:
        print('   %7.4f ms %5.3f r%s l%s %s' % (t.get('ms') or 0, best / t['ms'] if t.get('ms') else 0, t.get('regs'), t.get('local_bytes'), t['config']))
    for t in tr:
        if t['config'].get('m') == 256: print('   m256 %7.4f ms %5.3f r%s l%s %s %s' % (t.get('ms') or 0, best / t['ms'] if t.get('ms') else 0, t.get('regs'), t.get('local_bytes'), t['config'], t.get('error','')[:200]))
PY
cat /tmp/c1/table.txt
