#!/usr/bin/env bash
# Thirty-sixth session, call 7: Merge whose steps pack acc into the partials' type and load the partial
# as pairs beside it (bin/src36/split_merge_d.cu: 128 registers for both, acc's count). Call 5's packed
# rows written element by element (set_h) went to local memory (0.67x). ptxas, the Merge GPU tests, then
# pairs against the default and call 4's program (b: the partials read element by element), L2 flushed.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c7-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
X=bin/src36
nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -Itarget/cuda/include -o /tmp/d.cubin $X/split_merge_d.cu 2>&1 | grep -E 'registers|spill' | tee -a $S
cuobjdump -sass /tmp/d.cubin > /tmp/d.sass; echo "split_merge_d: $(grep -cE 'STL' /tmp/d.sass) STL, $(grep -cE 'LDL' /tmp/d.sass) LDL" | tee -a $S
timeout 240 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode/sm_90a/.*merge$' -test.v > $OUT/c7-tests.log 2>&1
echo "merge tests: exit $? $(grep -c '^    --- PASS' $OUT/c7-tests.log) passed, $(grep -c -- '--- FAIL' $OUT/c7-tests.log) failed" | tee -a $S
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192" "--batch 64 --heads 128 --mean-kv 4096" "--batch 64 --heads 128 --seq-q 2 --mean-kv 4096"; do
  R="run mla-decode $pt --splits 0 --repeats 30 --json --flush-l2"
  M="./bin/tilego $R --config 'merge=true early=false'"
  timeout 150 python3 scripts/pairs.py --rounds 3 base="./bin/tilego $R" d="$M" b="TILEGO_SOURCE=mla_decode=$X/split_merge_b.cu $M" 2>&1 | grep -E "^(base|d |b |round 1)" | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
