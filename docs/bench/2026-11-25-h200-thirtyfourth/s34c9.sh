#!/usr/bin/env bash
# Thirty-fourth session, call 9 (the same tree as call 8, a fresh machine): call 8's machine ran every mla point
# 1-2.7% slower than call 6's, programs firstFill left alone too (b64 h_q 16: 3929 against 4036 GB/s); the two
# points nearest their targets again, with their peers.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SUITES=mla TESTS=0 SHAPE='batch=64 heads=64 seq_q=1 mean_kv=8192 |batch=64 heads=128 seq_q=1 mean_kv=8192 ' timeout 400 bash scripts/gpu-suite.sh run > /tmp/suite.log 2>&1; echo "suite exit $?"
tail -8 /tmp/suite.log
echo "elapsed $(( $(date +%s) - T0 )) s"
