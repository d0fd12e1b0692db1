#!/usr/bin/env bash
# Thirty-seventh session, call 5: Merge with each warpgroup merging its own half with statistics of its
# own (no barrier between splits; a split's LSE and rows loaded together) and 16-byte partial reads.
# ptxas; Merge's GPU tests, memcheck and racecheck on one; pairs, L2 flushed: Merge against Early (the
# default) at b64 h_q 128 kv2k-32k and b16 kv8k; this tree against the last commit (bin/tilego-old)
# where Merge is the default (b128 kv4k/8k, s_q 2 kv4k).
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c5-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -Itarget/cuda/include -o /tmp/m.cubin bin/src37/merge_v3.cu 2>&1 | grep -E 'error|registers|spill' | sed "s/^/merge_v3: /" | tee -a $S
timeout 240 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode/sm_90a/.*merge$' -test.v > $OUT/c5-tests.log 2>&1
echo "merge tests: exit $? $(grep -c -- '--- PASS' $OUT/c5-tests.log) passed, $(grep -c -- '--- FAIL' $OUT/c5-tests.log) failed" | tee -a $S
for tool in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool $tool ./bin/cuda_backend.test -test.run 'TestGPUMLADecode/sm_90a/split_3parts_hq128_handoff_merge$' > $OUT/c5-$tool.log 2>&1
  echo "$tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/c5-$tool.log | tail -1)" | tee -a $S
done
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 64 --heads 128 --mean-kv 4096" "--batch 64 --heads 128 --mean-kv 16384" "--batch 64 --heads 128 --mean-kv 2048" "--batch 64 --heads 128 --mean-kv 32768" "--batch 16 --heads 128 --mean-kv 8192"; do
  R="run mla-decode $pt --splits 0 --repeats 30 --json --flush-l2"
  timeout 200 python3 scripts/pairs.py --rounds 3 base="./bin/tilego $R" merge="./bin/tilego $R --config 'merge=true early=false'" 2>&1 | grep -E "^(base|merge|round 1)" | sed "s/^/mla $pt: /" | tee -a $S
done
for pt in "--batch 128 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 4096" "--batch 64 --heads 128 --seq-q 2 --mean-kv 4096"; do
  R="run mla-decode $pt --splits 0 --repeats 30 --json --flush-l2"
  timeout 200 python3 scripts/pairs.py --rounds 3 old="./bin/tilego-old $R" new="./bin/tilego $R" 2>&1 | grep -E "^(old|new|round 1)" | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
