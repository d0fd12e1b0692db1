#!/usr/bin/env bash
# Thirty-ninth session, call 1: warpgroup 0's Q in registers for part of the
# scores (qreg_edit.py on `tilego emit mla-decode --batch 64 --heads 128
# --mean-kv 8192 --splits 0 --step 1 --target sm_90a`, the Early split
# kernel): ptxas on each, then alternating pairs at b64 h_q 128 kv8k / 16k,
# L2 flushed, against the unedited source compiled the same way (q0).
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
for v in q0 q4 q8 q12 q8r; do
  nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -Itarget/cuda/include -o /tmp/$v.cubin bin/src39/$v.cu 2>&1 | grep -E 'error|registers|spill' | sed "s/^/$v: /" | tee -a $S
  cuobjdump -sass /tmp/$v.cubin > /tmp/$v.sass; echo "$v: $(grep -c STL /tmp/$v.sass) STL, $(grep -c LDL /tmp/$v.sass) LDL, $(grep -c HGMMA /tmp/$v.sass) HGMMA" | tee -a $S
done
cp /tmp/q8.sass $OUT/q8.sass
pairs() { # rounds, point, variants...
  local n=$1 pt=$2; shift 2
  timeout 200 python3 scripts/pairs.py --rounds $n "$@" 2>&1 | grep -vE "^round [2-9]" | sed "s/^/$pt: /" | tee -a $S
}
for pt in "--batch 64 --heads 128 --mean-kv 8192:6" "--batch 64 --heads 128 --mean-kv 16384:3"; do
  R="run mla-decode ${pt%:*} --splits 0 --repeats 30 --json --flush-l2"
  V=(); for v in q0 q4 q8 q12 q8r; do V+=("$v=TILEGO_SOURCE=mla_decode=bin/src39/$v.cu ./bin/tilego $R"); done
  pairs ${pt#*:} "${pt%:*}" "${V[@]}"
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
