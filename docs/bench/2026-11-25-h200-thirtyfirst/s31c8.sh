#!/usr/bin/env bash
# Thirty-first session, call 8 (H200): backward config probes (32 query rows a step; stages) at B1 H16 2k d128 and
# d64, causal and not, with registers; d256 (64 keys, one warpgroup) checked once.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c8-summary.txt
for f in bin/src/bwd_d128_m32_step2.cu bin/src/bwd_d256_step2.cu; do
  nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -o /tmp/x.cubin $f 2>&1 | grep -E 'registers|spill' | sed "s#^#$(basename $f): #" | tee -a $S
done
for pt in "--seq-q 2048 --dim 128" "--seq-q 2048 --dim 128 --causal" "--seq-q 2048 --dim 64"; do
for cfg in "" "m=32" "m=32 stages=3" "stages=1"; do
  timeout 60 ./bin/tilego run flash-attention-bwd --batch 1 --heads 16 $pt --layout bshd --repeats 20 --json --check=$([ -z "$cfg" ] && echo true || echo false) ${cfg:+--config "$cfg"} > /tmp/b.json 2>/tmp/b.err
  python3 -c "import json; r=json.load(open('/tmp/b.json')); print('bwd b1h16 %-32s [%-14s] ms %.4f tf %.1f ok %s cfg %s' % ('$pt', '$cfg', r['time_ms'], r['tflops'], r.get('ok'), r['config']))" > /tmp/b.txt 2>&1 || echo "bwd $pt [$cfg] failed: $(tail -2 /tmp/b.err)" > /tmp/b.txt; tee -a $S < /tmp/b.txt
done; done
timeout 60 ./bin/tilego run flash-attention-bwd --batch 1 --heads 4 --seq-q 512 --dim 256 --causal --layout bshd --repeats 10 --json > /tmp/b.json 2>/tmp/b.err
python3 -c "import json; r=json.load(open('/tmp/b.json')); print('bwd d256 512 causal ms %.4f tf %.1f ok %s checked %s cfg %s' % (r['time_ms'], r['tflops'], r.get('ok'), r['checked'], r['config']))" > /tmp/b.txt 2>&1 || echo "bwd d256 failed: $(tail -2 /tmp/b.err)" > /tmp/b.txt; tee -a $S < /tmp/b.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
