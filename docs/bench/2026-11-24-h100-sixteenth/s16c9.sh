#!/usr/bin/env bash
# Sixteenth session, call 9: every GPU test on the final code generator (16-byte quad stores), memcheck on MLA and Direct walks.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
S=$OUT/c9-summary.txt
OUT=/tmp/c9 TESTS=1 BENCH=0 PEERS=0 SAN=0 timeout 480 bash scripts/gpu-suite.sh run > /tmp/c9-suite.log 2>&1
echo "suite exit $?" | tee -a $S
grep -E "^tests|^test |^tilego run" /tmp/c9/summary.txt 2>/dev/null | tee -a $S || tail -15 /tmp/c9-suite.log | tee -a $S
grep -h -- '--- FAIL' /tmp/c9/test-*.log | head -10 | tee -a $S
timeout 80 compute-sanitizer --tool memcheck --error-exitcode 9 ./bin/cuda_backend.test -test.run '^TestGPUMLADecode$/^sm_90a?/(split_3parts_hq128_handoff|hq128_m64|sq1_m16|split_sched_hq32_padded_splitn_ws)$' > /tmp/c9-mem1.log 2>&1
echo "memcheck MLA: exit $? $(grep -m1 'ERROR SUMMARY' /tmp/c9-mem1.log)" | tee -a $S
timeout 80 compute-sanitizer --tool memcheck --error-exitcode 9 ./bin/cuda_backend.test -test.run '^TestGPUPersistent$/sm_90a/causal_d256/ws_(ov_)?direct$' > /tmp/c9-mem2.log 2>&1
echo "memcheck d256 direct walks: exit $? $(grep -m1 'ERROR SUMMARY' /tmp/c9-mem2.log) $(grep -c -- '--- PASS' /tmp/c9-mem2.log)" | tee -a $S
timeout 80 compute-sanitizer --tool memcheck --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run '^TestGPUPersistent$/sm_90a/causal_d256/ws_(ov_)?direct$' > /tmp/c9-mem3.log 2>&1
echo "memcheck -v d256: exit $? $(grep -c -- '--- PASS' /tmp/c9-mem3.log) pass" | tee -a $S
