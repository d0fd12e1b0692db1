#!/usr/bin/env bash
# Thirty-ninth session, call 3: the tensor maps prefetched at a kernel's
# start (target/cuda/tma.go, initBars) against HEAD (bin/tilego-ab), and
# with it MLA's cluster of two (config cluster=2: a request's two 64-row
# blocks read each page from L2 once and multicast it), in alternating
# pairs, L2 flushed.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c3-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
pairs() { # rounds, point, variants...
  local n=$1 pt=$2; shift 2
  timeout 200 python3 scripts/pairs.py --rounds $n "$@" 2>&1 | grep -vE "^round [2-9]" | sed "s/^/$pt: /" | tee -a $S
}
for pt in "--batch 64 --heads 128 --mean-kv 8192:8" "--batch 128 --heads 128 --mean-kv 8192:3" "--batch 64 --heads 128 --mean-kv 16384:3" "--batch 64 --heads 128 --seq-q 2 --mean-kv 4096:3"; do
  R="run mla-decode ${pt%:*} --splits 0 --repeats 30 --json --flush-l2"
  pairs ${pt#*:} "${pt%:*}" old="./bin/tilego-ab $R" new="./bin/tilego $R" cluster="./bin/tilego $R --config cluster=2"
done
for pt in "--batch 16 --heads 16 --seq-q 8192 --dim 128" "--batch 32 --heads 16 --seq-q 4096 --dim 64"; do
  R="run flash-attention $pt --repeats 20 --json"
  pairs 3 "$pt" old="./bin/tilego-ab $R" new="./bin/tilego $R"
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
