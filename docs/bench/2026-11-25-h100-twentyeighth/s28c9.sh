#!/usr/bin/env bash
# Twenty-eighth session, call 9: a walk's producer loads the iteration's first ring slot before its walk
# tiles (target/cuda/ws.go): MLA's next piece's first page before its Q. TestGPUMLADecode and
# TestGPUPersistent; then MLA and FlashAttention's persistent walks against HEAD (bin/tilego-ab), back to back.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/c9; S=$OUT/c9-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
timeout 300 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUMLADecode|TestGPUPersistent)$' > /tmp/c9/tests.log 2>&1
echo "TestGPUMLADecode+Persistent: exit $?, $(grep -c -- '    --- PASS' /tmp/c9/tests.log) passed, $(grep -c -- '--- FAIL' /tmp/c9/tests.log) failed" | tee -a $S
grep -- '--- FAIL' /tmp/c9/tests.log | head -5 | tee -a $S
for i in 1 2 3; do
for pt in "mla-decode --batch 64 --mean-kv 8192 --heads 128 --splits 0" "mla-decode --batch 128 --mean-kv 8192 --heads 128 --splits 0" "mla-decode --batch 64 --mean-kv 4096 --seq-q 2 --heads 128 --splits 0" "mla-decode --batch 128 --mean-kv 4096 --seq-q 2 --heads 128 --splits 0" "flash-attention --batch 32 --heads 8 --dim 256 --seq-q 512 --layout bshd" "flash-attention --batch 32 --heads 8 --dim 256 --seq-q 512 --causal --layout bshd" "flash-attention --batch 32 --heads 16 --dim 128 --seq-q 512 --layout bshd" "flash-attention --batch 16 --heads 16 --dim 128 --seq-q 1024 --causal --layout bshd"; do
for b in tilego tilego-ab; do
  [ $(( $(date +%s) - T0 )) -gt 520 ] && break 3
  timeout 60 ./bin/$b run $pt --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-80s %-10s ms %.4f ok %s' % ('$pt', '$b', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "$b failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
tar czf $OUT/c9-logs.tgz -C /tmp c9
