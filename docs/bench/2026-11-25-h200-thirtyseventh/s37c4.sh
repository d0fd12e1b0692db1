#!/usr/bin/env bash
# Thirty-seventh session, call 4: where the compiler's quad-load Merge (bin/src37/merge_new.cu, 20 bytes
# spilled) spills, against call 2's hand version (vec.cu, none): the SASS around each STL/LDL; then pairs
# at b64 h_q 128 kv8k, L2 flushed: the default (Early), the compiler's Merge, the hand version.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c4-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
for f in merge_new vec; do
  nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -Itarget/cuda/include -o /tmp/$f.cubin bin/src37/$f.cu 2>&1 | grep -E 'error|registers|spill' | sed "s/^/$f: /" | tee -a $S
  cuobjdump -sass /tmp/$f.cubin > $OUT/$f.sass
  echo "$f: $(grep -c STL $OUT/$f.sass) STL, $(grep -c LDL $OUT/$f.sass) LDL, $(grep -c HGMMA $OUT/$f.sass) HGMMA, $(wc -l < $OUT/$f.sass) lines" | tee -a $S
done
R="run mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0 --repeats 30 --json --flush-l2"
MM="./bin/tilego $R --config 'merge=true early=false'"
timeout 200 python3 scripts/pairs.py --rounds 5 base="./bin/tilego $R" merge="$MM" vec="TILEGO_SOURCE=mla_decode=bin/src37/vec.cu $MM" 2>&1 | grep -E "^(base|merge|vec|round 1)" | sed "s/^/b64 kv8k: /" | tee -a $S
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
