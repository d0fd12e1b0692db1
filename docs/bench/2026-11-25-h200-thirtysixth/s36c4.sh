#!/usr/bin/env bash
# Thirty-sixth session, call 4: Merge without the spills. Call 3's SASS had 16 LDL in every page of the
# page loop (values spilled for the merge's 64-register copy of a partial). This tree reads the partial
# straight into the merge's multiply-adds (no fragment); bin/src36/split_merge.cu is call 3's program
# (the fragment). ptxas on both, the Merge and Early GPU tests, then pairs at h_q 128 kv8k, L2 flushed.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c4-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
X=bin/src36
for f in split_merge_b split_merge; do
  nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -Itarget/cuda/include -o /tmp/$f.cubin $X/$f.cu 2>&1 | grep -E 'registers|spill' | sed "s/^/$f: /" | tee -a $S
  cuobjdump -sass /tmp/$f.cubin > /tmp/$f.sass; echo "$f: $(grep -cE 'STL' /tmp/$f.sass) STL, $(grep -cE 'LDL' /tmp/$f.sass) LDL" | tee -a $S
done
timeout 240 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode/sm_90a/.*merge$' -test.v > $OUT/c4-tests.log 2>&1
echo "merge tests: exit $? $(grep -c '^        --- PASS' $OUT/c4-tests.log) passed, $(grep -c -- '--- FAIL' $OUT/c4-tests.log) failed" | tee -a $S
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192"; do
  R="run mla-decode $pt --splits 0 --repeats 30 --json --flush-l2"
  M="./bin/tilego $R --config 'merge=true early=false'"
  timeout 200 python3 scripts/pairs.py --rounds 3 base="./bin/tilego $R" merge_b="$M" merge_a="TILEGO_SOURCE=mla_decode=$X/split_merge.cu $M" 2>&1 | tail -4 | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
