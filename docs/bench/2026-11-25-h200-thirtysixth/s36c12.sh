#!/usr/bin/env bash
# Thirty-sixth session, call 12, the final tree: the fa-tail suite (the tail split against the single
# program in the same run; no peers), then b64 h_q 128 kv8k (its program unchanged this session: Early)
# timed five times, L2 flushed, to show its spread on this machine.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SUITES=fa-tail TESTS=0 PEERS=0 timeout 300 bash scripts/gpu-suite.sh run > /tmp/suite.log 2>&1; echo "suite exit $?"
grep -E "fa-tail|split|declined" /tmp/suite.log | tail -30
for i in 1 2 3 4 5; do
  ./bin/tilego run mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0 --repeats 30 --flush-l2 --json --check=$([ $i = 1 ] && echo true || echo false) | python3 -c 'import json,sys; r=json.load(sys.stdin); print("b64 kv8k run", r.get("time_ms"), "ms", r.get("tflops"), "TFLOP/s", r.get("ok"))'
done
echo "elapsed $(( $(date +%s) - T0 )) s"
