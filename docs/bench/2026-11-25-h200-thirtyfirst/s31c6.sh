#!/usr/bin/env bash
# Thirty-first session, call 6 (H200): lighter timelines of MLA's split kernel: stamps only outside the page loop
# (hand-timeline2.cu: Q ready, the last hand-back, the piece's end), and the same without the printf
# (hand-timeline3.cu), to see what perturbed call 5's (1.66x the time).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c6-summary.txt
for v in 2 3; do nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -o /tmp/tl.cubin bin/src/hand-timeline$v.cu 2>&1 | grep -E 'error|registers|spill|C75' | head -5 | sed "s/^/v$v: /" | tee -a $S; done
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192" "--batch 64 --mean-kv 32768"; do
  n=$(echo $pt | tr -d ' -' )
  timeout 60 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 20 --check=false --json > /tmp/p.json 2>/tmp/p.err; python3 -c "import json; r=json.load(open('/tmp/p.json')); print('plain    $pt ms %.4f tf %.1f' % (r['time_ms'], r['tflops']))" | tee -a $S
  for v in 2 3; do
  TILEGO_SOURCE=mla_decode=bin/src/hand-timeline$v.cu timeout 60 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 20 --check=false --json > $OUT/c6-tl$v-$n.txt 2>/tmp/t.err || tail -3 /tmp/t.err | tee -a $S
  grep -v '^TL' $OUT/c6-tl$v-$n.txt > /tmp/t.json; python3 -c "import json; r=json.load(open('/tmp/t.json')); print('timeline$v $pt ms %.4f tf %.1f, %d TL lines' % (r['time_ms'], r['tflops'], $(grep -c '^TL' $OUT/c6-tl$v-$n.txt)))" | tee -a $S
  done
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
