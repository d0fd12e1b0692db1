#!/usr/bin/env bash
# Twenty-eighth session, call 4: the consumers prefetch the next chunk's query rows into L2 at a chunk's start
# (kernels/mla.go prefetchQ), against 7db900b. TestGPUMLADecode; no sanitizers (no new sync)
# the split path against 7db900b (bin/tilego-ab), back to back, three rounds; the bench package's GPU test.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/c4; S=$OUT/c4-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
timeout 240 ./bin/cuda_backend.test -test.v -test.run '^TestGPUMLADecode$' > /tmp/c4/mla-tests.log 2>&1
echo "TestGPUMLADecode: exit $?, $(grep -c -- '    --- PASS' /tmp/c4/mla-tests.log) passed, $(grep -c -- '--- FAIL' /tmp/c4/mla-tests.log) failed" | tee -a $S
grep -- '--- FAIL' /tmp/c4/mla-tests.log | head -5 | tee -a $S
for i in 1 2 3; do
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192" "--batch 64 --mean-kv 4096 --seq-q 2" "--batch 128 --mean-kv 4096 --seq-q 2" "--batch 128 --mean-kv 8192 --heads 64"; do
for b in tilego tilego-ab; do
  [ $(( $(date +%s) - T0 )) -gt 380 ] && break 3
  h=128; case "$pt" in *--heads*) h= ;; esac
  timeout 60 ./bin/$b run mla-decode $pt ${h:+--heads $h} --splits 0 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-40s %-10s ms %.4f ok %s' % ('$pt', '$b', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "$b failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
timeout 200 ./bin/bench.test -test.v > /tmp/bench-test.log 2>&1; echo "bench.test: exit $?, $(grep -c -- '--- PASS' /tmp/bench-test.log) passed, $(grep -c -- '--- FAIL' /tmp/bench-test.log) failed" | tee -a $S
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
tar czf $OUT/c4-logs.tgz -C /tmp c4
