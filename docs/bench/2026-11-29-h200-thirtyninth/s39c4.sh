#!/usr/bin/env bash
# Thirty-ninth session, call 4: parts_edit.py (a ring slot's two parts on
# barriers of their own; the scores take part 1's panels first) on the
# Early split kernel, against the unedited source compiled the same way:
# ptxas, then alternating pairs, L2 flushed.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c4-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
for v in mla_old parts; do
  nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -Itarget/cuda/include -o /tmp/$v.cubin bin/src39/$v.cu 2>&1 | grep -E 'error|registers|spill|warn|C75' | sed "s/^/$v: /" | tee -a $S
  cuobjdump -sass /tmp/$v.cubin > /tmp/$v.sass; echo "$v: $(grep -c STL /tmp/$v.sass) STL, $(grep -c HGMMA /tmp/$v.sass) HGMMA, $(grep -c 'WARPGROUP.DEPBAR' /tmp/$v.sass) DEPBAR, $(grep -c 'WARPGROUP.ARRIVE' /tmp/$v.sass) ARRIVE" | tee -a $S
done
pairs() { # rounds, point, variants...
  local n=$1 pt=$2; shift 2
  timeout 200 python3 scripts/pairs.py --rounds $n "$@" 2>&1 | grep -vE "^round [2-9]" | sed "s/^/$pt: /" | tee -a $S
}
for pt in "--batch 64 --heads 128 --mean-kv 8192:8" "--batch 64 --heads 128 --mean-kv 4096:3" "--batch 64 --heads 128 --mean-kv 16384:3" "--batch 128 --heads 128 --mean-kv 8192:3"; do
  R="run mla-decode ${pt%:*} --splits 0 --repeats 30 --json --flush-l2 --config 'merge=false early=true'"
  pairs ${pt#*:} "${pt%:*}" base="TILEGO_SOURCE=mla_decode=bin/src39/mla_old.cu ./bin/tilego $R" parts="TILEGO_SOURCE=mla_decode=bin/src39/parts.cu ./bin/tilego $R"
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
