#!/usr/bin/env bash
# Thirty-first session, call 13 (H200): the backward with dQ deferred an iteration (its GEMM and atomics overlap the next tile; the GEMMs waited for where read)
# against the tree before (bin/tilego-ab): TestGPUAttnBwd, compute-sanitizer on its cases, registers,
# alternating pairs at B1 H16 2k (d128, d128 causal, d64), then SDPA's backward at the same shapes.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c13-summary.txt
timeout 120 ./bin/cuda_backend.test -test.run 'TestGPUAttnBwd' -test.v > /tmp/t.log 2>&1; echo "TestGPUAttnBwd: exit $?, $(grep -c -- '    --- PASS' /tmp/t.log) passed, $(grep -c -- '--- FAIL' /tmp/t.log) failed" | tee -a $S
bwd='^TestGPUAttnBwd$/^sm_90a$/^(causal|gqa_bshd_n128|causal_sq<skv_dv32)$'
for tool in memcheck racecheck; do compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run "$bwd" > /tmp/san.log 2>&1; echo "$tool: exit $?, $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log)" | tee -a $S; done
for pt in "--dim 128" "--dim 128 --causal" "--dim 64"; do
  timeout 150 python3 scripts/pairs.py --rounds 2 before="./bin/tilego-ab run flash-attention-bwd --batch 1 --heads 16 --seq-q 2048 $pt --layout bshd --repeats 20 --json" \
    defer="./bin/tilego run flash-attention-bwd --batch 1 --heads 16 --seq-q 2048 $pt --layout bshd --repeats 20 --json" 2>&1 | tee -a $OUT/c13-pairs.txt | tail -3 | sed "s/^/bwd 2k $pt: /" | tee -a $S
  echo "  at $(( $(date +%s) - T0 )) s" | tee -a $S
done
nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -o /tmp/x.cubin bin/src/bwd_d128_defer_step2.cu 2>&1 | grep -E 'registers|spill' | tee -a $S
for pt in "--dim 128" "--dim 128 --causal" "--dim 64"; do timeout 60 python3 scripts/bwd_peers.py --batch 1 --heads 16 --seq 2048 $pt 2>&1 | tail -2 | tee -a $S; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
