#!/usr/bin/env bash
# Twenty-eighth session, call 11: where the combine's time goes: ncu (no cache flush, clocks as they are) of
# the chain's kernels at b64 kv8k and b128 s_q 2 kv4k: duration, DRAM bytes, L2 hit rate.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c11-summary.txt
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 4096 --seq-q 2"; do
  echo "== $pt" | tee -a $S
  timeout 200 ncu --cache-control none --clock-control none -c 8 --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sector_op_read_hit_rate.pct,sm__throughput.avg.pct_of_peak_sustained_elapsed ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 3 --check=false > /tmp/ncu.log 2>&1
  echo "ncu exit $?" | tee -a $S
  grep -E "^  [a-z_]+.*\(|gpu__time|dram__bytes|lts__t_sector|sm__throughput" /tmp/ncu.log | tail -48 | tee -a $S
done
