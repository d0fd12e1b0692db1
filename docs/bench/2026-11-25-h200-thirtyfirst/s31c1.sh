#!/usr/bin/env bash
# Thirty-first session, call 1 (H200): the FlashAttention backward on a GPU for the first time (TestGPUAttnBwd,
# ptxas resource report, first timings beside SDPA's backward), then MLA's edge page zeroing only V's columns
# (bin/tilego-ev) against this tree (bin/tilego) in alternating pairs.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
timeout 240 ./bin/cuda_backend.test -test.run 'TestGPUAttnBwd' -test.v > $OUT/c1-bwdtest.log 2>&1; echo "TestGPUAttnBwd exit $? at $(( $(date +%s) - T0 )) s" | tee -a $S
grep -E -- '^(=== RUN|--- |    |PASS|FAIL|ok)' $OUT/c1-bwdtest.log | grep -v '=== RUN' | tail -30 | tee -a $S
for f in bin/src/bwd_*.cu; do n=$(basename $f .cu)
  nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -o /tmp/$n.cubin $f 2>&1 | grep -E 'registers|spill' | sed "s/^/$n: /" | tee -a $S
  cuobjdump -sass /tmp/$n.cubin | grep -oE 'HGMMA|HMMA|RED\.E\.ADD\.F32|ATOMG|STL|LDL' | sort | uniq -c | tr '\n' ' ' | sed "s/^/$n sass: /" | tee -a $S; echo | tee -a $S
done
for pt in "--batch 1 --heads 16 --seq-q 4096 --dim 128 --causal" "--batch 4 --heads 16 --seq-q 2048 --dim 128" "--batch 4 --heads 16 --seq-q 2048 --dim 64"; do
  timeout 150 ./bin/tilego run flash-attention-bwd $pt --layout bshd --repeats 20 --json > /tmp/b.json 2>/tmp/b.err
  python3 -c "import json; r=json.load(open('/tmp/b.json')); print('bwd %-50s ms %.4f tf %.1f ok %s checked %s errors %s cfg %s' % ('$pt', r['time_ms'], r['tflops'], r.get('ok'), r['checked'], r.get('errors'), r['config']))" 2>&1 | tee -a $S || echo "bwd $pt failed: $(tail -3 /tmp/b.err)" | tee -a $S
  echo "  at $(( $(date +%s) - T0 )) s" | tee -a $S
done
for pt in "--batch 1 --heads 16 --seq 4096 --dim 128 --causal" "--batch 4 --heads 16 --seq 2048 --dim 128" "--batch 4 --heads 16 --seq 2048 --dim 64"; do
  timeout 60 python3 scripts/bwd_peers.py $pt 2>&1 | tail -2 | tee -a $S
done
echo "== MLA edge page V columns: base = this tree, ev = the patch" | tee -a $S
for pt in "--batch 64 --mean-kv 1024" "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192" "--batch 64 --seq-q 2 --mean-kv 4096"; do
  timeout 150 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json" ev="./bin/tilego-ev run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json" 2>&1 | tee -a $OUT/c1-pairs.txt | tail -3 | sed "s/^/mla $pt: /" | tee -a $S
  echo "  at $(( $(date +%s) - T0 )) s" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
