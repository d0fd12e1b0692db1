#!/usr/bin/env bash
# Twenty-fourth session, call 14: racecheck on scripts/racecheck_named_barrier.cu k1-k4 (k4: a drawn walk's ticket on an mbarrier ring, race-free) and on a non-causal drawn walk of several rounds (TestGPUPersistent mha_d64 ws_ovpp_draw, a program older than this session); then the final tree's sweep at 4k-16k tokens and the extra points with the peers.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c14-summary.txt
nvcc -arch=sm_90a -o /tmp/rc scripts/racecheck_named_barrier.cu && for k in 1 2 3 4; do echo "k$k: $(compute-sanitizer --tool racecheck /tmp/rc $k 2>&1 | grep -E 'RACECHECK SUMMARY|^k')" | tee -a $S; done
compute-sanitizer --tool racecheck /tmp/rc 4 > $OUT/c14-rc-k4.log 2>&1
compute-sanitizer --tool racecheck ./bin/cuda_backend.test -test.v -test.run '^TestGPUPersistent$/^sm_90a$/^mha_d64$/^ws_ovpp_draw$' > $OUT/c14-rc-mha.log 2>&1
echo "racecheck mha_d64 ws_ovpp_draw: exit $? $(grep -c -- '--- PASS' $OUT/c14-rc-mha.log) passed, $(grep -m1 'RACECHECK SUMMARY' $OUT/c14-rc-mha.log)" | tee -a $S
grep -o "Potential [A-Z]* hazard detected at __shared__ 0x[0-9a-f]*" $OUT/c14-rc-mha.log | sort | uniq -c | head -4 | tee -a $S
OUT=/tmp/sw TESTS=0 SUITES=fa-sweep,extra SHAPE='seq_q=(4096|8192|16384) ' bash scripts/gpu-suite.sh run > /tmp/sw-run.log 2>&1
echo "sweep run: exit $?" | tee -a $S
for f in tilego.jsonl peers.jsonl table.txt summary.txt; do cp /tmp/sw/$f $OUT/c14-$f; done
cat /tmp/sw/summary.txt; tail -32 /tmp/sw/table.txt
