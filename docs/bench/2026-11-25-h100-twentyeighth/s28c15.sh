#!/usr/bin/env bash
# Twenty-eighth session, call 15: the Merge config with the hand-off kernels' last piece merging into its
# own fragments (kernels/mla.go mergeRegs; branch tmp-regmerge): its GPU test cases, its resource report, and
# the chain (the default, with the combine) against Merge, two rounds; round 1 checked.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c15-summary.txt
timeout 120 ./bin/cuda_backend.test -test.v -test.run '^TestGPUMLADecode$/.*/.*merge' > /tmp/t.log 2>&1
echo "merge tests: exit $?, $(grep -c -- '    --- PASS' /tmp/t.log) passed, $(grep -c -- '--- FAIL' /tmp/t.log) failed" | tee -a $S
grep -- '--- FAIL' /tmp/t.log | head -5 | tee -a $S
nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -o /tmp/mr.cubin bin/mr.cu 2>&1 | grep -E 'registers|spill' | tee -a $S
for i in 1 2; do
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192" "--batch 64 --mean-kv 4096 --seq-q 2" "--batch 128 --mean-kv 4096 --seq-q 2"; do
for cf in "" "merge=true"; do
  timeout 60 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) ${cf:+--config "$cf"} > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-40s %-12s ms %.4f ok %s' % ('$pt', '$cf', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "$cf failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
