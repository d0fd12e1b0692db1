#!/usr/bin/env bash
# Twenty-sixth session, call 7: where MLA's remaining racecheck reports (warpgroup 0's write of the row factors
# against warpgroup 1's reads) come from. racecheck on split_sched_hq128_handoff compiled from hand-edited copies of
# its program (TILEGO_SOURCE): c7-v0.cu as emitted; v1 without the skip of all-one rescales (__all_sync); v2
# without warpgroup 0's own edge barrier (a race of its own on the zeroing, on other lines); v3 both; v4 with
# warpgroup 0 meeting warpgroup 1 at the forward hand-off (barrier.sync) instead of arriving.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/c7; S=$OUT/c7-summary.txt
cp docs/bench/2026-11-25-h100-twentysixth/c7-v0.cu /tmp/c7/v0.cu  # v1-v4: made from v0 as below (before the call, on this machine; the same sed lines)
sed 's/if (!__all_sync(__activemask(), ones)) {/if (true) {/' /tmp/c7/v0.cu > /tmp/c7/v1.cu
sed 's/tl::bar_sync(4, 128);/\/\/ no edge barrier/' /tmp/c7/v0.cu > /tmp/c7/v2.cu
sed 's/tl::bar_sync(4, 128);/\/\/ no edge barrier/' /tmp/c7/v1.cu > /tmp/c7/v3.cu
sed 's/tl::bar_arrive(8, 256); \/\/ hand-off to the other warpgroup/tl::bar_sync_apart(8, 256);/' /tmp/c7/v0.cu > /tmp/c7/v4.cu
t='^TestGPUMLADecode$/^sm_90a/(split_sched_hq128_handoff)$'
for v in 0 1 2 3 4; do
  TILEGO_SOURCE=mla_decode=/tmp/c7/v$v.cu TILEGO_LINEINFO=1 timeout 150 compute-sanitizer --tool racecheck ./bin/cuda_backend.test -test.v -test.run "$t" > /tmp/c7/rc-v$v.log 2>&1
  echo "v$v: $(grep -c -- '    --- PASS' /tmp/c7/rc-v$v.log) passed; $(grep -m1 'RACECHECK SUMMARY' /tmp/c7/rc-v$v.log)" | tee -a $S
  grep -A1 "Race reported" /tmp/c7/rc-v$v.log | grep -o "at mla_decode+0x[0-9a-f]* in mla_decode.cu:[0-9]*\|\[[0-9]* hazards\]" | paste -sd' ' | fold -w 400 | tee -a $S
done
tar czf $OUT/c7-logs.tgz -C /tmp c7
