#!/usr/bin/env bash
# Twenty-ninth session, call 6 (H200, tree f421269): the GPU tests of runtime, jit and cuda_backend (all but
# the TMA/warp-specialized/persistent/cluster ones, call 7), the hang watchdog, tilego run mla-decode.
cd "$(dirname "$0")/.."
mkdir -p $OUT; T0=$(date +%s)
OUT=/tmp/t TEST_PKGS="runtime jit cuda_backend" GUARDED=0 BENCH=0 PEERS=0 timeout 575 bash scripts/gpu-suite.sh run > /tmp/t-run.log 2>&1
echo "tests: exit $? in $(( $(date +%s) - T0 )) s" | tee $OUT/c6-summary.txt
cat /tmp/t/summary.txt >> $OUT/c6-summary.txt; cat /tmp/t-run.log | tail -30
cp /tmp/t/logs.tgz $OUT/c6-logs.tgz 2>/dev/null || (cd /tmp/t && tar czf $OUT/c6-logs.tgz *.log)
cat $OUT/c6-summary.txt
