#!/usr/bin/env bash
# Twenty-seventh session, call 13: s_q 2 (four blocks read each page, half the bytes a FLOP): call 11's timing
# probes (bin/probe.py: without warpgroup 0's P.V, without the exponentials; outputs wrong on purpose) and the
# pages multicast to block pairs (cluster=2), against the default; back to back, two rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c13-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
for i in 1 2; do for pt in "--batch 64 --mean-kv 4096 --seq-q 2" "--batch 128 --mean-kv 4096 --seq-q 2"; do for v in base noPV0 noexp cluster; do
  [ $(( $(date +%s) - T0 )) -gt 300 ] && break 3
  if [ $v = cluster ]; then
    timeout 60 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) --config cluster=2 > /tmp/r.json 2>/tmp/r.err
  else
    TILEGO_SOURCE=mla_decode=bin/probe2-$v.cu timeout 60 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json --check=false > /tmp/r.json 2>/tmp/r.err
  fi
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-40s %-8s ms %.4f ok %s' % ('$pt', '$v', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "$v failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
