#!/usr/bin/env bash
# Thirty-ninth session, call 2: a reduction's per-thread fold in four
# partial results (target/cuda/emit_reduce.go, foldWays) against HEAD
# (bin/tilego-ab): ptxas on the new MLA split kernel, then alternating
# pairs, L2 flushed, at MLA's compute-bound points and three FlashAttention
# points (every softmax row reduction changes).
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
for v in old new; do
  nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -Itarget/cuda/include -o /tmp/$v.cubin bin/src39/mla_$v.cu 2>&1 | grep -E 'error|registers|spill' | sed "s/^/$v: /" | tee -a $S
  cuobjdump -sass /tmp/$v.cubin > /tmp/$v.sass; echo "$v: $(grep -c STL /tmp/$v.sass) STL, $(grep -c LDL /tmp/$v.sass) LDL, $(grep -c HGMMA /tmp/$v.sass) HGMMA, $(grep -c FMNMX /tmp/$v.sass) FMNMX" | tee -a $S
done
cp /tmp/new.sass $OUT/mla_new.sass
pairs() { # rounds, point, variants...
  local n=$1 pt=$2; shift 2
  timeout 200 python3 scripts/pairs.py --rounds $n "$@" 2>&1 | grep -vE "^round [2-9]" | sed "s/^/$pt: /" | tee -a $S
}
for pt in "--batch 64 --heads 128 --mean-kv 8192:8" "--batch 64 --heads 128 --mean-kv 4096:3" "--batch 64 --heads 128 --mean-kv 16384:3" \
          "--batch 128 --heads 128 --mean-kv 8192:3" "--batch 64 --heads 128 --seq-q 2 --mean-kv 4096:3" "--batch 64 --heads 64 --mean-kv 8192:3"; do
  R="run mla-decode ${pt%:*} --splits 0 --repeats 30 --json --flush-l2"
  pairs ${pt#*:} "${pt%:*}" old="./bin/tilego-ab $R" new="./bin/tilego $R"
done
for pt in "--batch 16 --heads 16 --seq-q 8192 --dim 128" "--batch 16 --heads 16 --seq-q 8192 --dim 128 --causal" "--batch 32 --heads 16 --seq-q 4096 --dim 64" "--batch 16 --heads 16 --seq-q 4096 --dim 256"; do
  R="run flash-attention $pt --repeats 20 --json"
  pairs 3 "$pt" old="./bin/tilego-ab $R" new="./bin/tilego $R"
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
