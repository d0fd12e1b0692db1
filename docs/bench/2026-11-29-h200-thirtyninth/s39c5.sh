#!/usr/bin/env bash
# Thirty-ninth session, call 5: stmatrix_edit.py (P handed to warpgroup 1
# by stmatrix.x4; stmnf: also without the proxy fence before the
# hand-back wait) on the Early split kernel, against the unedited source
# compiled the same way; alternating pairs, L2 flushed.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c5-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
for v in stm stmnf; do
  nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -Itarget/cuda/include -o /tmp/$v.cubin bin/src39/$v.cu 2>&1 | grep -E 'error|registers|spill' | sed "s/^/$v: /" | tee -a $S
  cuobjdump -sass /tmp/$v.cubin > /tmp/$v.sass; echo "$v: $(grep -c STL /tmp/$v.sass) STL, $(grep -c HGMMA /tmp/$v.sass) HGMMA, $(grep -c STSM /tmp/$v.sass) STSM, $(grep -c MEMBAR /tmp/$v.sass) MEMBAR" | tee -a $S
done
pairs() { # rounds, point, variants...
  local n=$1 pt=$2; shift 2
  timeout 200 python3 scripts/pairs.py --rounds $n "$@" 2>&1 | grep -vE "^round [2-9]" | sed "s/^/$pt: /" | tee -a $S
}
for pt in "--batch 64 --heads 128 --mean-kv 8192:6" "--batch 128 --heads 128 --mean-kv 8192:3"; do
  R="run mla-decode ${pt%:*} --splits 0 --repeats 30 --json --flush-l2 --config 'merge=false early=true'"
  V=(); for v in mla_old stm stmnf; do V+=("$v=TILEGO_SOURCE=mla_decode=bin/src39/$v.cu ./bin/tilego $R"); done
  pairs ${pt#*:} "${pt%:*}" "${V[@]}"
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
