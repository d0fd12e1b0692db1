#!/usr/bin/env bash
# Eighteenth session, call 7 (warm compile cache): the MLA suite timed back to back without a flush (--flush none, Launch.Time no longer waiting between launches) beside the copy bandwidth; then the point call 6 did not reach, L2-flushed.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c7-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
timeout 300 ./bin/tilego bench --suite mla --flush none --out $OUT/c7-none.jsonl > /tmp/c7.log 2>&1
echo "mla suite, flush none: exit $?" | tee -a $S
timeout 100 ./bin/tilego bench --suite mla --shape 'batch=128 heads=64 ' --out $OUT/c7-l2-last.jsonl >> /tmp/c7.log 2>&1
echo "mla b128 h64, flush l2: exit $?" | tee -a $S
python3 - $OUT <<'PY' | tee -a $S
import json, sys
o = sys.argv[1]
for f in ('c7-none.jsonl', 'c7-l2-last.jsonl'):
    for l in open(o + '/' + f):
        x = json.loads(l); s = x['shape']
        print(f, x.get('impl'), 'b%s h%s kv%s sq%s' % (s.get('batch'), s.get('heads'), s.get('mean_kv'), s.get('seq_q')), '%.1f TF %.0f GB/s %.3f of 3024' % (x.get('tflops', 0), x.get('gbps', 0), x.get('gbps', 0) / 3024), x.get('flush'), x.get('error', '')[:80])
PY
