#!/usr/bin/env bash
# Thirty-first session, call 3 (H200), the tree with MLA's edge page zeroing only V's columns: MLA's and the
# backward's GPU tests, compute-sanitizer (the suite's cases and the backward's), then backward config probes.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c3-summary.txt
timeout 200 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode|TestGPUDeviceTensors|TestGPUAttnBwd' -test.v > /tmp/t.log 2>&1; echo "MLA, device tensors, backward tests: exit $?, $(grep -c -- '--- PASS' /tmp/t.log) passed, $(grep -c -- '--- FAIL' /tmp/t.log) failed at $(( $(date +%s) - T0 )) s" | tee -a $S
grep -- '--- FAIL' /tmp/t.log | head | tee -a $S; gzip -c /tmp/t.log > $OUT/c3-test.log.gz
OUT=/tmp/san TESTS=0 SAN=1 BENCH=0 PEERS=0 timeout 300 bash scripts/gpu-suite.sh run > /tmp/san.log 2>&1; echo "sanitizers: exit $? at $(( $(date +%s) - T0 )) s" | tee -a $S
grep compute-sanitizer /tmp/san/summary.txt | tee -a $S; grep -c "race-free.*0 hazards" /tmp/san/summary.txt | sed 's/^/racecheck_named_barrier kernels with 0 hazards: /' | tee -a $S
for cfg in "" "stages=1" "n=128 threads=256" "m=128 n=64 threads=256" "m=128 n=128 threads=256"; do
  timeout 60 ./bin/tilego run flash-attention-bwd --batch 1 --heads 16 --seq-q 2048 --dim 128 --layout bshd --repeats 20 --json ${cfg:+--config "$cfg"} > /tmp/b.json 2>/tmp/b.err
  python3 -c "import json; r=json.load(open('/tmp/b.json')); print('bwd b1h16 2k d128 [%-26s] ms %.4f tf %.1f ok %s' % ('$cfg', r['time_ms'], r['tflops'], r.get('ok')))" 2>&1 | tee -a $S || echo "bwd [$cfg] failed: $(tail -2 /tmp/b.err)" | tee -a $S
done
timeout 60 python3 scripts/bwd_peers.py --batch 1 --heads 16 --seq 2048 --dim 128 2>&1 | tail -2 | tee -a $S
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
