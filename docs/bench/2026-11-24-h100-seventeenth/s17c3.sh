#!/usr/bin/env bash
# Seventeenth session, call 3: ncu of d256 causal 512 (tilego's walk, cuDNN's kernel): memory throughput and stalls; the MLA suite with its peers on the final code.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
S=$OUT/c3-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
CFG="m=128 n=64 stages=2 threads=256 ws=true pingpong=true overlap=true direct=true persistent=true"
timeout 150 ncu -k regex:flash -c 1 --set full --import-source no -o /tmp/tg -f ./bin/tilego run flash-attention --batch 32 --heads 8 --seq-q 512 --dim 256 --causal --layout bshd --config "$CFG" --repeats 1 > /tmp/ncu1.log 2>&1
echo "ncu tilego: exit $?" | tee -a $S
ncu -i /tmp/tg.ncu-rep --page details > $OUT/c3-ncu-tilego.txt 2>&1
ncu -i /tmp/tg.ncu-rep --page source --csv --print-source sass > /tmp/tg.csv 2>&1
python3 scripts/ncu_stalls.py /tmp/tg.csv --top 25 > $OUT/c3-stalls-tilego.txt 2>&1
timeout 150 ncu -k regex:. -c 3 --set full --import-source no -o /tmp/cd -f python3 scripts/ncu_peer.py --impl sdpa-cudnn --batch 32 --heads 8 --seq 512 --dim 256 --causal > /tmp/ncu2.log 2>&1
echo "ncu cudnn: exit $?" | tee -a $S
ncu -i /tmp/cd.ncu-rep --page details > $OUT/c3-ncu-cudnn.txt 2>&1
grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Memory Throughput|Registers Per|Shared Memory Config|Dynamic Shared|Block Size|Grid Size|Achieved Occupancy|Compute \(SM\) Throughput|L2 Hit Rate" $OUT/c3-ncu-tilego.txt $OUT/c3-ncu-cudnn.txt | tee -a $S
head -40 $OUT/c3-stalls-tilego.txt
OUT=/tmp/c3 TESTS=0 SUITES=mla timeout 380 bash scripts/gpu-suite.sh run > /tmp/c3-suite.log 2>&1
echo "mla suite with peers: exit $?" | tee -a $S
cp /tmp/c3/table.txt $OUT/c3-table.txt; cp /tmp/c3/tilego.jsonl $OUT/c3-tilego.jsonl; cp /tmp/c3/peers.jsonl $OUT/c3-peers.jsonl
tail -3 /tmp/c3-suite.log
cat /tmp/c3/table.txt
