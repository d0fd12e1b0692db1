#!/usr/bin/env bash
# Twenty-seventh session, call 1: where a split MLA launch's time goes. Clock stamps in the split kernel
# (scripts/trace_mla.py: Q landed, first page landed, page loop done, epilogue done per piece, waits) at
# b64 / b128 kv8k and b64 kv32k; ncu's durations of the split kernel and the combine; plain times beside.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/c1; S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192" "--batch 64 --mean-kv 32768"; do
  echo "== $pt" | tee -a $S
  timeout 90 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json --check=false > /tmp/r.json 2>/tmp/r.err
  python3 -c "import json; r=json.load(open('/tmp/r.json')); print('plain ms %.4f tflops %.1f' % (r['time_ms'], r.get('tflops', 0)))" 2>&1 | tee -a $S
  TILEGO_SOURCE=mla_decode=bin/mla-tr.cu timeout 120 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 3 > /tmp/c1/tr.log 2>&1
  echo "traced run exit $?: $(grep -v '^T[RP] ' /tmp/c1/tr.log | tail -3 | tr '\n' ' ')" | tee -a $S
  cp /tmp/c1/tr.log "/tmp/c1/tr-$(echo $pt | tr -d ' -').log"
  python3 bin/trace_mla.py report /tmp/c1/tr.log 2>&1 | tee -a $S
done
echo "== ncu b64 kv8k" | tee -a $S
timeout 200 ncu --clock-control none -k regex:mla --metrics gpu__time_duration.sum,sm__cycles_active.max,sm__cycles_active.avg,sm__cycles_active.min,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed ./bin/tilego run mla-decode --batch 64 --mean-kv 8192 --heads 128 --splits 0 --repeats 2 --check=false > /tmp/c1/ncu.log 2>&1
echo "ncu exit $?" | tee -a $S
grep -E "mla_|gpu__time|sm__cycles|dram__" /tmp/c1/ncu.log | tail -40 | tee -a $S
tar czf $OUT/c1-logs.tgz -C /tmp c1
