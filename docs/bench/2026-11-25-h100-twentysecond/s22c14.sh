#!/usr/bin/env bash
# Twenty-second session, call 14: call 13's stall samples by CUDA source line (TILEGO_LINEINFO=1; the emitted source saved under the NVRTC program's name so that ncu finds it), d256 512 non-causal, the library's pick: which mbarrier each spin waits on.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60 TILEGO_LINEINFO=1
mkdir -p $OUT; S=$OUT/c14-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
A="--batch 32 --heads 8 --seq-q 512 --dim 256"
./bin/tilego emit flash-attention $A --target sm_90a > flash_attention.cu
cp flash_attention.cu $OUT/c14-flash_attention.cu
timeout 200 ncu --clock-control none --set full --import-source yes -k regex:flash -c 1 -o /tmp/prof -f ./bin/tilego run flash-attention --layout bshd $A --repeats 1 --check=false > /tmp/ncu.log 2>&1
echo "ncu: exit $?" | tee -a $S
for v in "cuda,sass" "sass,cuda"; do
  ncu -i /tmp/prof.ncu-rep --page source --csv --print-source $v > /tmp/src.csv 2>/tmp/src.err
  echo "== $v: $(wc -l < /tmp/src.csv) lines; $(head -c 200 /tmp/src.err)" | tee -a $S
  head -c 1500 /tmp/src.csv | tee -a $S; echo | tee -a $S
  cp /tmp/src.csv $OUT/c14-src-$(echo $v | tr , _).csv
done
rm -f flash_attention.cu
