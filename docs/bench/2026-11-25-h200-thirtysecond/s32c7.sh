#!/usr/bin/env bash
# Thirty-second session, call 7 (what device time was left): the mla points call 6's time limit cut off
# (b128 h_q 64 kv8k) and its two lowest long-KV points again (b64 kv8k, b128 kv32k), with the peers.
cd "$(dirname "$0")/.."
SUITES=mla TESTS=0 SHAPE='batch=128 heads=64 seq_q=1 mean_kv=8192 |batch=64 heads=128 seq_q=1 mean_kv=8192 |batch=128 heads=128 seq_q=1 mean_kv=32768 ' timeout 320 bash scripts/gpu-suite.sh run 2>&1 | tail -12
