#!/usr/bin/env bash
# Thirty-fifth session, call 5: what in Early costs the split kernel 37 µs (ncu, call 4: 289 -> 326 µs at b64
# kv8k; combine 9.2 -> 12.6; registers unchanged, no spills). Hand edits of the emitted Early programs
# (bin/src35, made by s35_edits.py) timed in pairs at b64 kv8k, L2 flushed:
#   nolaunch  the split kernel without griddepcontrol.launch_dependents
#   acqrel    tickets as one atom.add.acq_rel.gpu, no fence.sc before and after (split and combine)
#   red       the split kernel's piece counted by thread 128 (warpgroup 1) with red.release.gpu, no trailing
#             barrier or proxy fence; the combine's ticket as acqrel
#   restrict  the combine's inputs __restrict__ again
# then ncu durations of red's two kernels.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c5-summary.txt
X=bin/src35
R="--batch 64 --heads 128 --mean-kv 8192 --splits 0 --repeats 30 --json --flush-l2"
E="./bin/tilego run mla-decode $R --config early"
timeout 400 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $R" early="$E" \
  nolaunch="TILEGO_SOURCE=mla_decode=$X/split_nolaunch.cu $E" \
  acqrel="TILEGO_SOURCE=mla_decode=$X/split_acqrel.cu,mla_combine=$X/comb_acqrel.cu $E" \
  red="TILEGO_SOURCE=mla_decode=$X/split_red.cu,mla_combine=$X/comb_acqrel.cu $E" \
  red_nopdl="TILEGO_PDL=0 TILEGO_SOURCE=mla_decode=$X/split_red.cu,mla_combine=$X/comb_acqrel.cu $E" \
  restrict="TILEGO_SOURCE=mla_combine=$X/comb_restrict.cu $E" 2>&1 | tail -9 | tee -a $S
timeout 60 ncu --metrics gpu__time_duration.sum env TILEGO_SOURCE=mla_decode=$X/split_red.cu,mla_combine=$X/comb_acqrel.cu ./bin/tilego run mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0 --repeats 3 --check=false --config early > /tmp/ncu.txt 2>&1
grep -E "mla_decode|mla_combine|gpu__time_duration" /tmp/ncu.txt | paste - - | awk '{print "red ncu:", $1, $(NF-1), $NF}' | tail -4 | tee -a $S
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
