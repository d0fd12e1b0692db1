#!/usr/bin/env bash
# Thirty-fourth session, call 10 (call 9's machine): firstFill against the programs before it at b64 h_q 64
# kv8k (memory-bound, 0.84-0.85 of the copy in calls 8-9) and b64 h_q 128 kv8k, 6 rounds, flushed.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
for pt in "--batch 64 --heads 64 --mean-kv 8192:split64" "--batch 64 --heads 128 --mean-kv 8192:split"; do
  old=${pt#*:}; pt=${pt%:*}
  R="$pt --splits 0 --repeats 30 --json --flush-l2"
  echo "== $pt"
  timeout 120 python3 scripts/pairs.py --rounds 6 before="TILEGO_SOURCE=mla_decode=bin/$old.cu ./bin/tilego run mla-decode $R" after="./bin/tilego run mla-decode $R" 2>&1 | tail -3
done
