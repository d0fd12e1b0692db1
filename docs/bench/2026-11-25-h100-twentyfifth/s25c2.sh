#!/usr/bin/env bash
# Twenty-fifth session, call 2: racecheck on the race-free kernels k1-k9 (k5: the ticket read by lane 0; k7-k9: warpgroup-local barriers and hand-offs); the flush probe; racecheck on MLA's small set; the mla suite's torch peer and the copy on rotated inputs.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/c2; S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
nvcc -arch=sm_90a -o /tmp/rc scripts/racecheck_named_barrier.cu && for k in 1 2 3 4 5 6 7 8 9; do
  echo "k$k: $(compute-sanitizer --tool racecheck /tmp/rc $k 2>&1 | tee /tmp/c2/rc-k$k.log | grep -m1 'RACECHECK SUMMARY' | sed 's/=* *//')" | tee -a $S; done
timeout 120 python3 docs/bench/2026-11-25-h100-twentyfifth/flushprobe.py 2>&1 | tee -a $S
mla='^TestGPUMLADecode$/^sm_90a/(sq1_m16|split_sched_hq128_splitn_ws|split_sched_hq128_handoff|split_sched_hq32_padded_splitn_ws|split_uniform3_sq2_f16_handoff|split_sched_hq64_splitn_merge)$'
timeout 200 compute-sanitizer --tool racecheck ./bin/cuda_backend.test -test.v -test.run "$mla" > /tmp/c2/rc-mla.log 2>&1
echo "racecheck MLA: exit $?, $(grep -c -- '--- PASS' /tmp/c2/rc-mla.log) passed; $(grep -m1 'RACECHECK SUMMARY' /tmp/c2/rc-mla.log)" | tee -a $S
grep -E "Potential|Thread" /tmp/c2/rc-mla.log | sed 's/block ([0-9,]*)//; s/0x[0-9a-f]* in/in/' | sort | uniq -c | sort -rn | head -12 | tee -a $S
PEERS_BUDGET_S=240 timeout 330 python3 scripts/peers.py --suite mla > $OUT/c2-peers-mla.jsonl 2>/tmp/c2/peers.log; echo "peers mla: exit $?" | tee -a $S
grep -E "copy|torch" /tmp/c2/peers.log | tail -25 | tee -a $S
tar czf $OUT/c2-logs.tgz -C /tmp c2
