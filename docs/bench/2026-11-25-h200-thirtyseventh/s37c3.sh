#!/usr/bin/env bash
# Thirty-seventh session, call 3: the compiler reads Merge's partials 16 bytes a lane (quad loads,
# target/cuda/emit_quadload.go). ptxas on the emitted program; Merge's GPU tests and memcheck on one;
# then pairs, L2 flushed: Merge against Early (the default) at b64 h_q 128 kv1k-32k and at small
# batches (more pieces a request), and at b128 kv8k the new Merge against TILEGO_QUADLOADS=0.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c3-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -Itarget/cuda/include -o /tmp/m.cubin bin/src37/merge_new.cu 2>&1 | grep -E 'error|registers|spill' | sed "s/^/merge_new: /" | tee -a $S
timeout 240 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode/sm_90a/.*merge$' -test.v > $OUT/c3-tests.log 2>&1
echo "merge tests: exit $? $(grep -c -- '--- PASS' $OUT/c3-tests.log) passed, $(grep -c -- '--- FAIL' $OUT/c3-tests.log) failed" | tee -a $S
timeout 200 compute-sanitizer --tool memcheck ./bin/cuda_backend.test -test.run 'TestGPUMLADecode/sm_90a/split_3parts_hq128_handoff_merge$' > $OUT/c3-memcheck.log 2>&1
echo "memcheck: exit $? $(grep -E 'ERROR SUMMARY' $OUT/c3-memcheck.log | tail -1)" | tee -a $S
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 64 --heads 128 --mean-kv 4096" "--batch 64 --heads 128 --mean-kv 16384" "--batch 64 --heads 128 --mean-kv 2048" "--batch 64 --heads 128 --mean-kv 1024" "--batch 64 --heads 128 --mean-kv 32768" "--batch 16 --heads 128 --mean-kv 8192" "--batch 8 --heads 128 --mean-kv 16384"; do
  R="run mla-decode $pt --splits 0 --repeats 30 --json --flush-l2"
  timeout 200 python3 scripts/pairs.py --rounds 3 base="./bin/tilego $R" merge="./bin/tilego $R --config 'merge=true early=false'" 2>&1 | grep -E "^(base|merge|round 1)" | sed "s/^/mla $pt: /" | tee -a $S
done
R="run mla-decode --batch 128 --heads 128 --mean-kv 8192 --splits 0 --repeats 30 --json --flush-l2"
timeout 200 python3 scripts/pairs.py --rounds 3 base="./bin/tilego $R" noquad="TILEGO_QUADLOADS=0 ./bin/tilego $R" 2>&1 | grep -E "^(base|noquad|round 1)" | sed "s/^/mla b128 kv8k: /" | tee -a $S
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
