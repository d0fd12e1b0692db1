#!/usr/bin/env bash
# Thirty-fifth session, call 4: why Early lost 9-10% at h_q 128 in call 3 even with TILEGO_PDL=0 (no overlap).
# ptxas's resource report of both split kernels and combines (emitted into bin/src35 by this tree), and each
# kernel's duration by ncu (launches serialized), base and early, at b64 kv8k.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c4-summary.txt
for f in bin/src35/*.cu; do
  n=$(basename $f .cu)
  nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -o /tmp/$n.cubin $f 2>&1 | grep -E 'registers|spill' | sed "s/^/$n: /" | tee -a $S
done
R="mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0 --repeats 3 --check=false"
for v in base early; do
  C=""; [ $v = early ] && C="--config early"
  timeout 120 ncu --metrics gpu__time_duration.sum ./bin/tilego run $R $C > /tmp/ncu-$v.txt 2>&1
  echo "== ncu $v: exit $?" | tee -a $S
  grep -E "mla_decode|mla_combine|gpu__time_duration" /tmp/ncu-$v.txt | paste - - | awk '{print $1, $(NF-1), $NF}' | tail -8 | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
