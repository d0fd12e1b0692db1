#!/usr/bin/env bash
# Thirtieth session, call 4 (H200): compute-sanitizer memcheck, racecheck and synccheck (SAN=1) on
# gpu-suite.sh's small FlashAttention/GEMM cases and MLA cases, no tests or benchmark.
cd "$(dirname "$0")/.."
mkdir -p $OUT; T0=$(date +%s)
OUT=/tmp/san TESTS=0 SAN=1 BENCH=0 PEERS=0 timeout 560 bash scripts/gpu-suite.sh run > /tmp/san.txt 2>&1
echo "exit $? in $(( $(date +%s) - T0 )) s" >> /tmp/san.txt
cp /tmp/san.txt $OUT/c4-summary.txt; cp /tmp/san/logs.tgz $OUT/c4-logs.tgz 2>/dev/null
tail -30 /tmp/san.txt
