#!/usr/bin/env bash
# Thirty-sixth session, call 2: Merge rebuilt (a cut request's first piece, which ends its part, waits for
# the request's other pieces, folds their partials into its registers and writes O; no combine program;
# a cooperative launch). Resources of the split kernel with and without it (ptxas -v, b64 h_q 128 kv8k:
# bin/src36/split_merge.cu, split_early.cu), the MLA GPU tests with Merge, compute-sanitizer on two Merge
# cases, then alternating pairs against the default (Early at b64), L2 flushed.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
for f in split_merge split_early; do
  nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -Itarget/cuda/include -o /tmp/$f.cubin bin/src36/$f.cu 2>&1 | grep -E 'registers|spill' | sed "s/^/$f: /" | tee -a $S
done
timeout 200 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode/.*merge' -test.v > $OUT/c2-tests.log 2>&1
echo "merge tests: exit $? $(grep -c '^    --- PASS' $OUT/c2-tests.log) passed, $(grep -c -- '--- FAIL' $OUT/c2-tests.log) failed" | tee -a $S
grep -E -- '--- FAIL|Error|error' $OUT/c2-tests.log | head -20 | tee -a $S
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode/(split_sched_hq64_handoff_merge|split_3parts_hq128_handoff_merge)$' > $OUT/c2-san-$tool.log 2>&1
  echo "$tool: exit $? $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/c2-san-$tool.log)" | tee -a $S
done
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192" "--batch 64 --heads 128 --mean-kv 4096" "--batch 64 --heads 64 --mean-kv 8192" "--batch 64 --heads 128 --seq-q 2 --mean-kv 4096"; do
  R="run mla-decode $pt --splits 0 --repeats 30 --json --flush-l2"
  timeout 150 python3 scripts/pairs.py --rounds 3 base="./bin/tilego $R" merge="./bin/tilego $R --config 'merge=true early=false'" 2>&1 | tail -3 | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
