#!/usr/bin/env bash
# Thirty-first session, call 5 (H200): a timeline of MLA's split kernel (h_q 128 s_q 1, hand-offs): the hand
# edit bin/src/hand-timeline.cu stamps globaltimer per block and piece (Q ready, first scores, warpgroup 1's first
# P·V, the last hand-back, the piece's end) and its 6th launch prints them; beside it, the same runs unedited.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c5-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -o /tmp/tl.cubin bin/src/hand-timeline.cu 2>&1 | grep -E 'error|registers|spill' | head -5 | tee -a $S
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192" "--batch 64 --mean-kv 32768" "--batch 64 --mean-kv 2048"; do
  n=$(echo $pt | tr -d ' -' )
  for i in 1 2; do
  timeout 60 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 20 --check=false --json > /tmp/p.json 2>/tmp/p.err; python3 -c "import json; r=json.load(open('/tmp/p.json')); print('plain    $pt ms %.4f tf %.1f' % (r['time_ms'], r['tflops']))" | tee -a $S
  TILEGO_SOURCE=mla_decode=bin/src/hand-timeline.cu timeout 60 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 20 --check=false --json > $OUT/c5-tl-$n-$i.txt 2>/tmp/t.err || tail -3 /tmp/t.err | tee -a $S
  grep -v '^TL' $OUT/c5-tl-$n-$i.txt > /tmp/t.json; python3 -c "import json; r=json.load(open('/tmp/t.json')); print('timeline $pt ms %.4f tf %.1f, %d TL lines' % (r['time_ms'], r['tflops'], $(grep -c '^TL' $OUT/c5-tl-$n-$i.txt)))" | tee -a $S
  done
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
