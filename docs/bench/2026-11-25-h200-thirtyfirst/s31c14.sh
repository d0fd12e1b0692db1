#!/usr/bin/env bash
# Thirty-first session, call 14 (H200): the final tree's backward at call 1's shapes, beside SDPA's backward.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c14-summary.txt
for pt in "--batch 1 --heads 16 --seq-q 4096 --dim 128 --causal" "--batch 4 --heads 16 --seq-q 2048 --dim 128" "--batch 4 --heads 16 --seq-q 2048 --dim 64"; do
  timeout 150 ./bin/tilego run flash-attention-bwd $pt --layout bshd --repeats 20 --json > /tmp/b.json 2>/tmp/b.err
  python3 -c "import json; r=json.load(open('/tmp/b.json')); print('bwd %-50s ms %.4f tf %.1f ok %s checked %s' % ('$pt', r['time_ms'], r['tflops'], r.get('ok'), r['checked']))" > /tmp/b.txt 2>&1 || echo "bwd $pt failed: $(tail -2 /tmp/b.err)" > /tmp/b.txt; tee -a $S < /tmp/b.txt
  timeout 60 python3 scripts/bwd_peers.py $(echo $pt | sed 's/--seq-q/--seq/') 2>&1 | tail -2 | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
