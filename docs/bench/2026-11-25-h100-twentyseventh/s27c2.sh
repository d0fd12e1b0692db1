#!/usr/bin/env bash
# Twenty-seventh session, call 2: a lighter trace (stamps per piece only, no wait sums: the first version spilled)
# and a fit of a block's time to its pages and pieces; then experiment switches back to back against the default:
# the scheduler's piece cost (10 -> 4, 6), the combine's rows a block (8 -> 16), pages loaded evict-first at h_q 128,
# partials stored without evict-last.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/c2; S=$OUT/c2-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192"; do
  echo "== trace $pt" | tee -a $S
  TILEGO_SOURCE=mla_decode=bin/mla-tr.cu timeout 120 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 3 > /tmp/c2/tr.log 2>&1
  echo "traced run exit $?: $(grep -v '^T[RP] ' /tmp/c2/tr.log | tail -3 | tr '\n' ' ')" | tee -a $S
  cp /tmp/c2/tr.log "/tmp/c2/tr-$(echo $pt | tr -d ' -').log"
  python3 bin/trace_mla.py report /tmp/c2/tr.log 2>&1 | tee -a $S
done
run() { # label env point
  local v=$1 e=$2; shift 2
  env $e timeout 60 ./bin/tilego run mla-decode "$@" --splits 0 --repeats 30 --json --check=false > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-40s %-12s ms %.4f' % ('$*', '$v', r['time_ms']))" 2>&1 | tee -a $S || echo "$v failed: $(tail -2 /tmp/r.err)" | tee -a $S
}
for i in 1 2 3; do
for pt in "--batch 64 --mean-kv 8192 --heads 128" "--batch 128 --mean-kv 8192 --heads 128" "--batch 64 --mean-kv 4096 --heads 128 --seq-q 2"; do
  [ $(( $(date +%s) - T0 )) -gt 500 ] && break 2
  run base X=1 $pt
  run cost4 TILEGO_EXP_COST=4 $pt
  run cost6 TILEGO_EXP_COST=6 $pt
  run crows16 TILEGO_EXP_CROWS=16 $pt
  run pagefirst TILEGO_EXP_PAGEFIRST=1 $pt
  run onohint TILEGO_EXP_ONOHINT=1 $pt
done; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
tar czf $OUT/c2-logs.tgz -C /tmp c2
