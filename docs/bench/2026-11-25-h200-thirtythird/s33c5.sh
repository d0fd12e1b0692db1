#!/usr/bin/env bash
# Thirty-third session, call 5 (the device time left): call 4's two compute-bound points below 600 TFLOP/s
# again, alone (b128 kv32k's spread was 0.23 ms of 1.96 in call 4's suite), with the peers.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
SUITES=mla TESTS=0 SHAPE='batch=64 heads=128 seq_q=1 mean_kv=8192 |batch=128 heads=128 seq_q=1 mean_kv=32768 ' timeout 290 bash scripts/gpu-suite.sh run 2>&1 | tail -8
