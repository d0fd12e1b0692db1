#!/usr/bin/env bash
# Twenty-seventh session, call 11: timing probes of the split kernel (bin/probe.py: its outputs are wrong on
# purpose): without warpgroup 0's own P.V, and without the exponentials, against the kernel as emitted.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c11-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
for i in 1 2; do for pt in "--batch 64 --mean-kv 8192" "--batch 64 --mean-kv 32768"; do for v in base noPV0 noexp; do
  [ $(( $(date +%s) - T0 )) -gt 300 ] && break 3
  TILEGO_SOURCE=mla_decode=bin/probe-$v.cu timeout 60 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json --check=false > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-28s %-6s ms %.4f' % ('$pt', '$v', r['time_ms']))" 2>&1 | tee -a $S || echo "$v failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
