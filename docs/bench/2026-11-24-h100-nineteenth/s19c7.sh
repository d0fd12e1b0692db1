#!/usr/bin/env bash
# Nineteenth session, call 7: compute-sanitizer memcheck, racecheck and synccheck on the small FlashAttention/GEMM cases (the persistent causal san_d64 walks now run the packed last round through walk variables) and MLA's split path (its Q now a walk load), on main 754912b.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c7-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
OUT=/tmp/c7 SAN=1 TESTS=0 BENCH=0 PEERS=0 timeout 570 bash scripts/gpu-suite.sh run > /tmp/c7-suite.log 2>&1
echo "sanitizers: exit $?" | tee -a $S
grep -E "compute-sanitizer|racecheck on" /tmp/c7-suite.log | tee -a $S
for f in /tmp/c7/san-*.log; do echo "$f: $(grep -c -- '--- PASS' $f) pass, $(grep -c -- '--- FAIL' $f) fail; $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f)"; done | tee -a $S
tar czf $OUT/c7-san-logs.tgz -C /tmp/c7 $(cd /tmp/c7 && ls san-*.log) 2>/dev/null
