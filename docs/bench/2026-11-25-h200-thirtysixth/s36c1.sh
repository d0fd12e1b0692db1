#!/usr/bin/env bash
# Thirty-sixth session, call 1: what the combine still costs MLA's chain at h_q 128 kv8k, and the old Merge
# (one program, every piece drawing a ticket) on today's ticket lowering. Alternating pairs, L2 flushed:
#   base     the default (b64: Early)
#   noearly  early=false
#   nocomb   early=false with a combine that returns at once (bin/src36/comb_ret.cu; outputs not checked):
#            the chain's time without the combine's work, an upper bound on what merging elsewhere gains
#   merge    merge=true early=false (the split kernel's last piece of a request merges its splits)
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
X=bin/src36
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192"; do
  R="run mla-decode $pt --splits 0 --repeats 30 --json --flush-l2"
  timeout 200 python3 scripts/pairs.py --rounds 3 base="./bin/tilego $R" noearly="./bin/tilego $R --config early=false" \
    nocomb="TILEGO_SOURCE=mla_combine=$X/comb_ret.cu ./bin/tilego $R --config early=false --check=false #" \
    merge="./bin/tilego $R --config 'merge=true early=false'" 2>&1 | tail -5 | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
