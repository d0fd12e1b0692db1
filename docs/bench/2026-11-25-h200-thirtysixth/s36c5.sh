#!/usr/bin/env bash
# Thirty-sixth session, call 5: Merge with the merger's rows packed in the partials' type (64 registers a
# thread, as acc's 128 f32 were) and each partial loaded as pairs into 64 more: call 4's per-element loads
# (no spills, but the merge's loads in small batches) were 0.984x at b64 kv8k, 1.006x at b128; call 3's
# merge cut out, 1.022x / 1.017x. ptxas on this program (bin/src36/split_merge_c.cu), the Merge GPU tests,
# then pairs at h_q 128 kv8k and kv4k, h_q 64 kv8k, s_q 2 kv4k, L2 flushed.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c5-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
X=bin/src36
nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -Itarget/cuda/include -o /tmp/c.cubin $X/split_merge_c.cu 2>&1 | grep -E 'registers|spill' | tee -a $S
cuobjdump -sass /tmp/c.cubin > /tmp/c.sass; echo "split_merge_c: $(grep -cE 'STL' /tmp/c.sass) STL, $(grep -cE 'LDL' /tmp/c.sass) LDL" | tee -a $S
timeout 240 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode/sm_90a/.*merge$' -test.v > $OUT/c5-tests.log 2>&1
echo "merge tests: exit $? $(grep -c '^    --- PASS' $OUT/c5-tests.log) passed, $(grep -c -- '--- FAIL' $OUT/c5-tests.log) failed" | tee -a $S
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192" "--batch 64 --heads 128 --mean-kv 4096" "--batch 64 --heads 64 --mean-kv 8192" "--batch 64 --heads 128 --seq-q 2 --mean-kv 4096"; do
  R="run mla-decode $pt --splits 0 --repeats 30 --json --flush-l2"
  timeout 150 python3 scripts/pairs.py --rounds 3 base="./bin/tilego $R" merge="./bin/tilego $R --config 'merge=true early=false'" 2>&1 | grep -E "^(base|merge|round 1)" | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
