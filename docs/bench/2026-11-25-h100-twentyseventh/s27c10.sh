#!/usr/bin/env bash
# Twenty-seventh session, call 10: the bench package's GPU test (call 9 gave it 80 s, too few), and b128 kv32k
# again (576 TFLOP/s in call 9's suite, where cuBLAS fell from 803 to 717 between the start and the end).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c10-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
timeout 330 ./bin/bench.test -test.v > /tmp/bench-test.log 2>&1; echo "bench.test: exit $?, $(grep -c -- '--- PASS' /tmp/bench-test.log) passed, $(grep -c -- '--- FAIL' /tmp/bench-test.log) failed" | tee -a $S
grep -E "^(=== RUN|--- |    --- )" /tmp/bench-test.log | tail -20 | tee -a $S
for i in 1 2 3; do for pt in "--batch 128 --mean-kv 32768" "--batch 64 --mean-kv 32768"; do
  [ $(( $(date +%s) - T0 )) -gt 520 ] && break 2
  timeout 60 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json --check=false > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-30s ms %.4f' % ('$pt', r['time_ms']))" 2>&1 | tee -a $S
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
done; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
