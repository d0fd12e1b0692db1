#!/usr/bin/env bash
# Thirty-seventh session, call 1: Merge with its partners' partials staged in the dead page ring
# (s37_stage.py on `tilego emit mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0 --step 1
# --target sm_90a --config 'merge=true early=false'`, in bin/src37/stage.cu; merge.cu the emitted one).
# ptxas on both; the staged program checked against float64 at shapes whose requests are cut in 2-9
# pieces; then pairs at b64 / b128 h_q 128 kv8k, L2 flushed.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
X=bin/src37
for f in merge stage; do
  nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -Itarget/cuda/include -o /tmp/$f.cubin $X/$f.cu 2>&1 | grep -E 'error|registers|spill' | sed "s/^/$f: /" | tee -a $S
  cuobjdump -sass /tmp/$f.cubin > /tmp/$f.sass; echo "$f: $(grep -cE 'STL' /tmp/$f.sass) STL, $(grep -cE 'LDL' /tmp/$f.sass) LDL" | tee -a $S
done
M="--splits 0 --config 'merge=true early=false'"
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 8 --heads 128 --mean-kv 4096" "--batch 16 --heads 128 --mean-kv 16384" "--batch 128 --heads 128 --mean-kv 2048" "--batch 3 --heads 128 --mean-kv 300" "--batch 64 --heads 128 --seq-q 2 --mean-kv 4096"; do
  eval "TILEGO_SOURCE=mla_decode=$X/stage.cu timeout 60 ./bin/tilego run mla-decode $pt $M --repeats 3" > $OUT/c1-check.log 2>&1
  echo "check $pt: exit $? $(grep -E "error|rel|FAIL|compiled" $OUT/c1-check.log | tr "\n" " " | cut -c1-300)" | tee -a $S
done
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192"; do
  R="run mla-decode $pt --splits 0 --repeats 30 --json --flush-l2"
  MM="./bin/tilego $R --config 'merge=true early=false'"
  timeout 200 python3 scripts/pairs.py --rounds 5 base="./bin/tilego $R" merge="$MM" stage="TILEGO_SOURCE=mla_decode=$X/stage.cu $MM" 2>&1 | grep -E "^(base|merge|stage|round 1)" | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
