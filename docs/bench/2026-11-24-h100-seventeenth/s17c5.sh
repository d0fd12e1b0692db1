#!/usr/bin/env bash
# Seventeenth session, call 5: ncu d128 causal 512 with the pair order longer first (HEAD) and shorter first (tilego-sf); ncu d256 non-causal 512 tilego vs cuDNN;
# the 512-2k sweep (all dims) with peers on HEAD.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
S=$OUT/c5-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
MET="--section SpeedOfLight --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct"
C128="m=128 n=128 stages=2 threads=256 ws=true pingpong=true overlap=true direct=true persistent=true"
for r in tilego tilego-sf; do
  timeout 60 ncu -k regex:flash -c 1 $MET -o /tmp/n$r -f ./bin/$r run flash-attention --batch 32 --heads 16 --seq-q 512 --dim 128 --causal --layout bshd --config "$C128" --repeats 1 > /dev/null 2>&1
  echo "ncu d128 c512 $r: exit $? $(ncu -i /tmp/n$r.ncu-rep --page details 2>&1 | grep -E 'Duration|dram__bytes|lts__t_sector_hit' | tr -s ' ' | tr '\n' ';')" | tee -a $S
done
C256="m=128 n=64 stages=2 threads=256 ws=true pingpong=true overlap=true direct=true persistent=true"
timeout 60 ncu -k regex:flash -c 1 $MET -o /tmp/n256 -f ./bin/tilego run flash-attention --batch 32 --heads 8 --seq-q 512 --dim 256 --layout bshd --config "$C256" --repeats 1 > /dev/null 2>&1
echo "ncu d256 nc512 tilego: exit $? $(ncu -i /tmp/n256.ncu-rep --page details 2>&1 | grep -E 'Duration|dram__bytes|lts__t_sector_hit|SM Frequency' | tr -s ' ' | tr '\n' ';')" | tee -a $S
timeout 100 ncu --launch-skip 3 -c 1 $MET -o /tmp/cd -f python3 scripts/ncu_peer.py --impl sdpa-cudnn --batch 32 --heads 8 --seq 512 --dim 256 > /dev/null 2>&1
echo "ncu d256 nc512 cudnn: exit $? $(ncu -i /tmp/cd.ncu-rep --page details 2>&1 | grep -E '^  [a-z]|Duration|dram__bytes|lts__t_sector_hit|SM Frequency' | cut -c1-120 | tr -s ' ' | tr '\n' ';')" | tee -a $S
OUT=/tmp/c5 TESTS=0 SUITES=fa-sweep SHAPE='seq_q=(512|1024|2048) ' timeout 420 bash scripts/gpu-suite.sh run > /tmp/c5-suite.log 2>&1
echo "512-2k sweep with peers: exit $?" | tee -a $S
cp /tmp/c5/table.txt $OUT/c5-table.txt; cp /tmp/c5/tilego.jsonl $OUT/c5-tilego.jsonl; cp /tmp/c5/peers.jsonl $OUT/c5-peers.jsonl
tail -3 /tmp/c5-suite.log
cat /tmp/c5/table.txt
