#!/usr/bin/env bash
# Thirty-third session, call 4 (this tree, 9720e18): the mla suite with its peers (torch MLA, copy bandwidth,
# cuBLAS peak), the MLA GPU tests having passed in call 1 on the same programs.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SUITES=mla TESTS=0 timeout 575 bash scripts/gpu-suite.sh run > /tmp/suite.log 2>&1; echo "suite exit $?"
tail -28 /tmp/suite.log
echo "elapsed $(( $(date +%s) - T0 )) s"
