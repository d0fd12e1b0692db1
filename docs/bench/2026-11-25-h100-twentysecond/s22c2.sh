#!/usr/bin/env bash
# Twenty-second session, call 2: why call 1's skipped rescale ran 1-4% slower. ptxas's report and SASS of A (14fc618) and B (this tree) at d256 512, d64 1k, d128 512 and MLA's split kernel; ncu instructions executed (and FMULs) of both at d256 512 and d64 1k: does the skip happen, and what did the branch cost?
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/sass; S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
for f in bin/src22/*-[AB].cu; do n=$(basename $f .cu)
  nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src22 -o /tmp/sass/$n.cubin $f 2>&1 | grep -E 'registers|spill|C7514|warning' | sed "s/^/$n: /" | tee -a $S
  cuobjdump -sass /tmp/sass/$n.cubin > /tmp/sass/$n.sass
  echo "$n: $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' /tmp/sass/$n.sass) instr, $(grep -c HGMMA /tmp/sass/$n.sass) HGMMA, $(grep -c 'WARPGROUP.DEPBAR' /tmp/sass/$n.sass) DEPBAR, $(grep -c 'WARPGROUP.ARRIVE' /tmp/sass/$n.sass) ARRIVE, $(grep -cE ' FMUL ' /tmp/sass/$n.sass) FMUL, $(grep -c 'VOTE' /tmp/sass/$n.sass) VOTE, $(grep -cE ' BRA ' /tmp/sass/$n.sass) BRA" | tee -a $S
done
tar czf $OUT/c2-sass.tgz -C /tmp/sass .
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,sm__cycles_active.avg
for spec in "d256-512:--batch 32 --heads 8 --seq-q 512 --dim 256" "d64-1k:--batch 16 --heads 32 --seq-q 1024 --dim 64"; do n=${spec%%:*}; a=${spec#*:}
  for b in tilego-ab tilego; do
    timeout 120 ncu --clock-control none --metrics $M -k regex:flash -c 1 ./bin/$b run flash-attention --layout bshd $a --repeats 1 > /tmp/n.txt 2>&1
    echo "$n $b: $(grep -E 'gpu__time|inst_executed|cycles_active' /tmp/n.txt | awk '{print $1"="$NF}' | tr '\n' ' ')" | tee -a $S
  done
done
