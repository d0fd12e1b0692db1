#!/usr/bin/env bash
# Twenty-eighth session, call 10: what the combine costs inside the chain: the chain as emitted against the
# chain with a combine that returns at once (TILEGO_SOURCE; outputs wrong on purpose), three rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c10-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
for i in 1 2 3; do
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192" "--batch 64 --mean-kv 4096 --seq-q 2" "--batch 128 --mean-kv 4096 --seq-q 2" "--batch 64 --mean-kv 8192 --heads 64"; do
for v in base empty; do
  f=comb; case "$pt" in *seq-q*) f=comb2 ;; esac
  src=""; [ $v = empty ] && src="mla_combine=bin/$f-empty.cu"
  h=128; case "$pt" in *--heads*) h= ;; esac
  TILEGO_SOURCE=$src timeout 60 ./bin/tilego run mla-decode $pt ${h:+--heads $h} --splits 0 --repeats 30 --json --check=false > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-40s %-6s ms %.4f' % ('$pt', '$v', r['time_ms']))" 2>&1 | tee -a $S || echo "$v failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
