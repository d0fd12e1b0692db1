#!/usr/bin/env bash
# Twenty-fourth session, call 7: the sweep's causal points at 512-2k with drawn causal walks among the candidates (d128 two, d256 one), with the peers.
cd "$(dirname "$0")/.."
OUT=$OUT TESTS=0 SUITES=fa-sweep SHAPE='seq_q=(512|1024|2048) .*causal=true' bash scripts/gpu-suite.sh run > $OUT/c7-run.txt 2>&1
tail -25 $OUT/c7-run.txt
