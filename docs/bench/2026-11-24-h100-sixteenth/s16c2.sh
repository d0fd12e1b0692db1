#!/usr/bin/env bash
# Sixteenth session, call 2: GEMM, GQA and B=1 H=16 points with peers (owed from the fifteenth); ncu of MLA split at h_q 128 kv16k (split kernel vs combine, SM balance).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
for b in 64 128; do
  timeout 90 ncu --metrics gpu__time_duration.sum,sm__cycles_active.max,sm__cycles_active.avg,sm__cycles_active.min,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hgmma_cycles_active.avg.pct_of_peak_sustained_elapsed ./bin/tilego run mla-decode --batch $b --heads 128 --mean-kv 16384 --splits 0 --repeats 2 > /tmp/c2-ncu-$b.log 2>&1
  echo "== ncu b$b kv16k exit $?" >> $OUT/c2-ncu.txt
  grep -E '^  [a-zA-Z_]+.*\(|gpu__time|sm__cycles|dram__|hgmma' /tmp/c2-ncu-$b.log >> $OUT/c2-ncu.txt
  grep -iE 'splits|µs|us|TFLOP' /tmp/c2-ncu-$b.log | head -5 >> $OUT/c2-ncu.txt
done
OUT=/tmp/c2 TESTS=0 SHAPE='batch=1 heads=16 heads_kv=16 seq_q=4096|heads_kv=8 |^m=8192' timeout 400 bash scripts/gpu-suite.sh run > /tmp/c2-suite.log 2>&1
echo "suite exit $?" >> $OUT/c2-ncu.txt
cp /tmp/c2/table.txt $OUT/c2-table.txt 2>/dev/null; cp /tmp/c2/table.md $OUT/c2-table.md 2>/dev/null; cp /tmp/c2/tilego.jsonl $OUT/c2-tilego.jsonl; cp /tmp/c2/peers.jsonl $OUT/c2-peers.jsonl
tail -5 /tmp/c2-suite.log
cat $OUT/c2-ncu.txt
cat $OUT/c2-table.txt
