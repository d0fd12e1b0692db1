#!/usr/bin/env bash
# Twenty-fourth session, call 3: the causal 512 points flushed (as the sweep) and back to back, tilego (bench, all candidates) and cuDNN/FA2 (bin/flushcmp.py), twice.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c3-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
for i in 1 2; do
  python3 bin/flushcmp.py 2>&1 | grep -v Warn | tee -a $S
  for f in l2 none; do
    ./bin/tilego bench --suite fa-sweep --shape 'seq_q=512 .*causal=true' --flush $f --out $OUT/c3-$f-$i.jsonl 2>$OUT/c3-$f-$i.log
    python3 -c "
import json
for l in open('$OUT/c3-$f-$i.jsonl'):
    r=json.loads(l); s=r['shape']
    print('tilego d%d flush %-4s %.4f ms %.1f TF %s' % (s['dim'], '$f', r['ms'], r['tflops'], r['config']))
" | tee -a $S
  done
done
