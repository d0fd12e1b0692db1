#!/usr/bin/env bash
# Twenty-seventh session, call 12: the pages multicast to a request's two 64-row blocks (config cluster=2), now
# that the page loop runs near the page stream's rate, against the default; back to back, two rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c12-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
for i in 1 2; do for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192" "--batch 64 --mean-kv 32768"; do for cf in "" "cluster=2"; do
  [ $(( $(date +%s) - T0 )) -gt 300 ] && break 3
  timeout 60 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) ${cf:+--config "$cf"} > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-28s %-10s ms %.4f ok %s' % ('$pt', '${cf:-default}', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "$cf failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
