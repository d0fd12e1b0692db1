#!/usr/bin/env bash
# Twenty-eighth session, call 13: the MLA combine with 2 or 3 splits in flight (bin/tilego-st2, -st3:
# 19-28 KB of shared memory a block, one wave of blocks) against 4 (bin/tilego: 37.5 KB, 1.3 waves at
# b64), three rounds back to back; round 1 checked.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c13-summary.txt; T0=$(date +%s)
for i in 1 2 3; do
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192" "--batch 64 --mean-kv 4096 --seq-q 2" "--batch 128 --mean-kv 4096 --seq-q 2" "--batch 64 --mean-kv 8192 --heads 64"; do
for b in tilego tilego-st2 tilego-st3; do
  [ $(( $(date +%s) - T0 )) -gt 300 ] && break 3
  h=128; case "$pt" in *--heads*) h= ;; esac
  timeout 60 ./bin/$b run mla-decode $pt ${h:+--heads $h} --splits 0 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-40s %-11s ms %.4f ok %s' % ('$pt', '$b', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "$b failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
