#!/usr/bin/env bash
# Thirty-fifth session, call 2 (the thirty-fourth's final tree): the FlashAttention split, tail, chain and
# device-tensor GPU tests; then MLA's clusters (a part's two 64-row blocks reading each page once, multicast)
# against the default split program in alternating pairs, L2 flushed before each launch. Why: in call 1's
# stamps (thirty-fourth, c1) pages run at 1.77-1.80 µs mid-kernel and 1.69-1.73 near its end, when fewer SMs
# are busy; 132 blocks reading 72 KB a page from L2 at that rate is 5.4 TB/s, which the clusters halve.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
timeout 200 ./bin/cuda_backend.test -test.run 'TestGPUFlashAttentionSplit|TestGPUFlashAttentionTail|TestGPUChainTime|TestGPUDeviceTensors' -test.v > /tmp/t.log 2>&1
echo "FA split/tail/chain/device tests: exit $?, $(grep -c -- '--- PASS' /tmp/t.log) passed, $(grep -c -- '--- FAIL' /tmp/t.log) failed at $(( $(date +%s) - T0 )) s" | tee -a $S
grep -- '--- FAIL' /tmp/t.log | head | tee -a $S; gzip -c /tmp/t.log > $OUT/c2-test.log.gz
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192" "--batch 64 --heads 128 --mean-kv 16384"; do
  R="$pt --splits 0 --repeats 30 --json --flush-l2"
  timeout 150 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $R" cluster="./bin/tilego run mla-decode $R --config cluster=2" 2>&1 | tail -3 | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
