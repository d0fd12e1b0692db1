#!/usr/bin/env bash
# Sixteenth session, call 5 (final code): MLA GPU tests with the new 3-part cases, sanitizers on them, the bench package's GPU tests,
# flash-attention --splits 0 against --splits 1 through the CLI, and fa-tail (quick) through the registry's split problem.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
S=$OUT/c5-summary.txt
timeout 200 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUMLADecode|TestGPUFlashAttentionSplit|TestGPUFlashAttentionTail)$' > /tmp/c5-tests.log 2>&1
echo "MLA/split/tail tests: exit $?, $(grep -c -- '--- PASS' /tmp/c5-tests.log) pass, $(grep -c -- '--- FAIL' /tmp/c5-tests.log) fail" | tee -a $S
grep -- '--- FAIL' /tmp/c5-tests.log | head -5 | tee -a $S
timeout 150 ./bin/bench.test -test.v > /tmp/c5-bench-tests.log 2>&1
echo "bench package tests: exit $?, $(grep -c -- '--- PASS' /tmp/c5-bench-tests.log) pass, $(grep -c -- '--- FAIL' /tmp/c5-bench-tests.log) fail" | tee -a $S
for tool in memcheck synccheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.run '^TestGPUMLADecode$/^sm_90a/(split_3parts_hq64_splitn_ws|split_3parts_hq32_padded_splitn_ws)$' > /tmp/c5-$tool.log 2>&1
  echo "$tool (3-part splitn_ws cases): exit $? $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/c5-$tool.log)" | tee -a $S
done
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 ./bin/tilego run flash-attention --heads 34 --seq-q 512 --seq-kv 2048 --layout bshd --splits 0 --repeats 1 > /tmp/c5-famem.log 2>&1
echo "memcheck run flash-attention --splits 0 (tail): exit $? $(grep -m1 'ERROR SUMMARY' /tmp/c5-famem.log)" | tee -a $S
for shape in "--heads 8 --seq-q 512 --seq-kv 16384" "--heads 16 --seq-q 1024 --seq-kv 32768 --causal" "--heads 34 --seq-q 512 --seq-kv 8192" "--batch 17 --heads 8 --seq-q 512 --seq-kv 8192" "--heads 16 --seq-q 16384 --seq-kv 16384"; do
  for sp in 1 0 1 0; do
    ./bin/tilego run flash-attention --dim 128 --layout bshd $shape --splits $sp --repeats 30 --json 2>/dev/null | python3 -c 'import json,sys; x=json.loads(sys.stdin.read()); print("%-48s splits=%s %8.3f ms %6.1f TF ok=%s %s" % (sys.argv[1], sys.argv[2], x["time_ms"], x["tflops"], x.get("ok"), x.get("split_note","")))' "$shape" $sp | tee -a $S
  done
done
OUT=/tmp/c5ft TESTS=0 PEERS=0 QUICK=1 SUITES=fa-tail timeout 200 bash scripts/gpu-suite.sh run > /tmp/c5-ft.log 2>&1
echo "fa-tail quick: exit $?" | tee -a $S
cat /tmp/c5ft/table.txt 2>/dev/null | tee -a $S || tail -20 /tmp/c5-ft.log
cp /tmp/c5ft/tilego.jsonl $OUT/c5-fatail.jsonl 2>/dev/null
