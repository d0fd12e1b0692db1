#!/usr/bin/env bash
# Twenty-seventh session, call 4: the split kernel and the combine timed by ncu without its cache flush
# (--cache-control none; call 3's ncu flushed the L2 before the combine, so its partials all came from DRAM),
# and the SMs' busy cycles; then the merge in the split kernel (config merge=true) and piece costs 8 and 12
# against the default, back to back, three rounds, the first checked.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/c4; S=$OUT/c4-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
for b in 64 128; do
  echo "== ncu b$b kv8k, caches as the run leaves them" | tee -a $S
  timeout 150 ncu --clock-control none --cache-control none -k regex:mla -c 6 --metrics gpu__time_duration.sum,dram__bytes_read.sum,sm__cycles_active.max,sm__cycles_active.avg,sm__cycles_active.min ./bin/tilego run mla-decode --batch $b --mean-kv 8192 --heads 128 --splits 0 --repeats 2 --check=false > /tmp/c4/ncu-b$b.log 2>&1
  grep -E "^  mla_|gpu__time|dram__|sm__cycles" /tmp/c4/ncu-b$b.log | tail -12 | tee -a $S
done
run() { # label env config check point
  local v=$1 e=$2 cf=$3 ck=$4; shift 4
  env $e timeout 60 ./bin/tilego run mla-decode "$@" --splits 0 --repeats 30 --json --check=$ck ${cf:+--config "$cf"} > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-44s %-10s ms %.4f ok %s' % ('$*', '$v', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "$v failed: $(tail -2 /tmp/r.err)" | tee -a $S
}
for i in 1 2 3; do
ck=$([ $i = 1 ] && echo true || echo false)
for pt in "--batch 64 --mean-kv 8192 --heads 128" "--batch 128 --mean-kv 8192 --heads 128" "--batch 64 --mean-kv 4096 --heads 128 --seq-q 2"; do
  [ $(( $(date +%s) - T0 )) -gt 480 ] && break 2
  run base X=1 "" $ck $pt
  run merge X=1 "merge=true" $ck $pt
  run cost8 TILEGO_EXP_COST=8 "" $ck $pt
  run cost12 TILEGO_EXP_COST=12 "" $ck $pt
done; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
tar czf $OUT/c4-logs.tgz -C /tmp c4
