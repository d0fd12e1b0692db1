#!/usr/bin/env bash
# Thirty-seventh session, call 2: Merge's partials read 16 bytes a lane (s37_vec.py: bin/src37/vec.cu)
# against the emitted Merge (merge.cu) and the default (Early at b64); stamps (s37_stamps.py) of both
# at b64 h_q 128 kv8k: where a merger's time goes (wait, loop, stores).
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
X=bin/src37
for f in vec merge_st vec_st; do
  nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -Itarget/cuda/include -o /tmp/$f.cubin $X/$f.cu 2>&1 | grep -E 'error|registers|spill' | sed "s/^/$f: /" | tee -a $S
done
M="--splits 0 --config 'merge=true early=false'"
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 8 --heads 128 --mean-kv 4096" "--batch 16 --heads 128 --mean-kv 16384" "--batch 128 --heads 128 --mean-kv 2048"; do
  eval "TILEGO_SOURCE=mla_decode=$X/vec.cu timeout 60 ./bin/tilego run mla-decode $pt $M --repeats 3" > $OUT/c2-check.log 2>&1
  echo "check $pt: exit $? $(grep -E "error|rel|FAIL" $OUT/c2-check.log | tr "\n" " " | cut -c1-300)" | tee -a $S
done
for v in merge_st vec_st; do
  eval "TILEGO_STAMPS=$OUT/$v TILEGO_SOURCE=mla_decode=$X/$v.cu timeout 60 ./bin/tilego run mla-decode --batch 64 --heads 128 --mean-kv 8192 $M --repeats 30 --flush-l2 --check=false" 2>&1 | grep -E "time|speed" | sed "s/^/$v: /" | tee -a $S
done
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192"; do
  R="run mla-decode $pt --splits 0 --repeats 30 --json --flush-l2"
  MM="./bin/tilego $R --config 'merge=true early=false'"
  timeout 200 python3 scripts/pairs.py --rounds 5 base="./bin/tilego $R" merge="$MM" vec="TILEGO_SOURCE=mla_decode=$X/vec.cu $MM" 2>&1 | grep -E "^(base|merge|vec|round 1)" | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
