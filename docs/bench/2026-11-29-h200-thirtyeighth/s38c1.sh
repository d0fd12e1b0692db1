#!/usr/bin/env bash
# Thirty-eighth session, call 1 (the thirty-seventh's Merge: each warpgroup merges its half with
# statistics of its own, partials read 16 bytes a lane; the mla suite now also times the split
# path's Hopper default and its Early/Merge counterpart). ptxas on the Merge split kernel
# (bin/src38/merge.cu: tilego emit mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0
# --step 1 --target sm_90a --config 'merge=true early=false'); alternating pairs, L2 flushed:
# Merge against the default (Early) at b64 h_q 128 kv4k-16k, this tree against the last commit
# (bin/tilego-ab) where Merge is the default; then the mla suite with its peers.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -Itarget/cuda/include -o /tmp/m.cubin bin/src38/merge.cu 2>&1 | grep -E 'error|registers|spill' | sed "s/^/merge: /" | tee -a $S
cuobjdump -sass /tmp/m.cubin > /tmp/m.sass; echo "merge: $(grep -c STL /tmp/m.sass) STL, $(grep -c LDL /tmp/m.sass) LDL, $(grep -c HGMMA /tmp/m.sass) HGMMA" | tee -a $S
pairs() { # rounds, point, variants...
  local n=$1 pt=$2; shift 2
  timeout 150 python3 scripts/pairs.py --rounds $n "$@" 2>&1 | grep -vE "^round [2-9]" | sed "s/^/$pt: /" | tee -a $S
}
for pt in "--batch 64 --heads 128 --mean-kv 8192:5" "--batch 64 --heads 128 --mean-kv 4096:3" "--batch 64 --heads 128 --mean-kv 16384:3"; do
  R="run mla-decode ${pt%:*} --splits 0 --repeats 30 --json --flush-l2"
  pairs ${pt#*:} "${pt%:*}" base="./bin/tilego $R" merge="./bin/tilego $R --config 'merge=true early=false'"
done
for pt in "--batch 128 --heads 128 --mean-kv 8192" "--batch 64 --heads 128 --seq-q 2 --mean-kv 4096"; do
  R="run mla-decode $pt --splits 0 --repeats 30 --json --flush-l2"
  pairs 3 "$pt" old="./bin/tilego-ab $R" new="./bin/tilego $R"
done
echo "pairs done at $(( $(date +%s) - T0 )) s" | tee -a $S
OUT=$OUT/suite SUITES=mla TESTS=0 timeout 420 bash scripts/gpu-suite.sh run > /tmp/suite.log 2>&1; echo "suite exit $?" | tee -a $S
tail -28 /tmp/suite.log
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
