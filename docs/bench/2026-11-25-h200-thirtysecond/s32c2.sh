#!/usr/bin/env bash
# Thirty-second session, call 2: the register merge (mergeSplits in fragments, one row a thread, 16-byte vector
# copies; no shared memory or barriers in MLA's combine) against the tree before it (bin/tilego-ab = HEAD):
# the combine's GPU tests and memcheck, then alternating pairs at MLA and fa-tail points, round 1 checked.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
timeout 240 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode|TestGPUFlashAttentionSplit|TestGPUFlashAttentionTail|TestGPUChainTime|TestGPUAttnBwd|TestGPUDeviceTensors' -test.v > /tmp/t.log 2>&1
echo "tests: exit $?, $(grep -c -- '--- PASS' /tmp/t.log) passed, $(grep -c -- '--- FAIL' /tmp/t.log) failed at $(( $(date +%s) - T0 )) s" | tee -a $S
grep -- '--- FAIL' /tmp/t.log | head | tee -a $S; gzip -c /tmp/t.log > $OUT/c2-test.log.gz
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUMLADecode|TestGPUFlashAttentionSplit)$/^sm_90a/(split_sched_hq128_handoff|split_uniform3_sq2_f16_handoff|split_sched_hq64_splitn_merge|split5_causal_sq>skv|split9_short|split2_d64_f16)$' > /tmp/san-$tool.log 2>&1
  echo "compute-sanitizer $tool: exit $?, $(grep -c -- '--- PASS' /tmp/san-$tool.log) passed, $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san-$tool.log)" | tee -a $S
done
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 64 --heads 64 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192" "--batch 64 --heads 128 --seq-q 2 --mean-kv 4096" "--batch 64 --heads 16 --mean-kv 8192"; do
  R="$pt --splits 0 --repeats 30 --json"
  echo "== $pt" >> $OUT/c2-pairs.txt
  timeout 150 python3 scripts/pairs.py --rounds 4 old="./bin/tilego-ab run mla-decode $R" new="./bin/tilego run mla-decode $R" 2>&1 | tee -a $OUT/c2-pairs.txt | tail -3 | sed "s/^/mla $pt: /" | tee -a $S
  echo "  at $(( $(date +%s) - T0 )) s" | tee -a $S
done
for pt in "--batch 1 --heads 34 --seq-q 512 --seq-kv 16384" "--batch 1 --heads 8 --seq-q 512 --seq-kv 16384" "--batch 17 --heads 8 --seq-q 512 --seq-kv 8192"; do
  R="$pt --dim 128 --layout bshd --splits 0 --repeats 30 --json"
  echo "== fa $pt" >> $OUT/c2-pairs.txt
  timeout 120 python3 scripts/pairs.py --rounds 4 old="./bin/tilego-ab run flash-attention $R" new="./bin/tilego run flash-attention $R" 2>&1 | tee -a $OUT/c2-pairs.txt | tail -3 | sed "s/^/fa $pt: /" | tee -a $S
  echo "  at $(( $(date +%s) - T0 )) s" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
