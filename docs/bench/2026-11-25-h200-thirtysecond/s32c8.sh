#!/usr/bin/env bash
# Thirty-second session, call 8 (the last device time): the fa-tail suite's quick points on the final tree,
# split path against the single program (no peers).
cd "$(dirname "$0")/.."
SUITES=fa-tail QUICK=1 TESTS=0 PEERS=0 timeout 150 bash scripts/gpu-suite.sh run 2>&1 | tail -14
