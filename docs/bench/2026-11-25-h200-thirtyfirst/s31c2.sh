#!/usr/bin/env bash
# Thirty-first session, call 2 (H200): MLA h_q 128 s_q 1 in alternating pairs: this tree (base), the edge page
# zeroing only V's columns (ev, bin/tilego-ev), and a hand edit of the split kernel releasing Q after warpgroup 0's
# last scores of a piece instead of after the piece's last hand-back (qe, bin/src/hand-qearly.cu); then the
# memory-bound b64 h_q 64 kv8k with fewer scheduler parts (--sms) and ev.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
R="--heads 128 --splits 0 --repeats 30 --json"
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192" "--batch 64 --mean-kv 4096" "--batch 64 --mean-kv 1024" "--batch 64 --mean-kv 16384"; do
  echo "== $pt" >> $OUT/c2-pairs.txt
  timeout 170 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $pt $R" ev="./bin/tilego-ev run mla-decode $pt $R" \
    qe="TILEGO_SOURCE=mla_decode=bin/src/hand-qearly.cu ./bin/tilego run mla-decode $pt $R" 2>&1 | tee -a $OUT/c2-pairs.txt | tail -4 | sed "s/^/mla $pt: /" | tee -a $S
  echo "  at $(( $(date +%s) - T0 )) s" | tee -a $S
done
R="--batch 64 --mean-kv 8192 --repeats 30 --json"
for h in 64 32; do
  echo "== h$h" >> $OUT/c2-pairs.txt
  timeout 170 python3 scripts/pairs.py --rounds 3 s132="./bin/tilego run mla-decode --heads $h $R --splits 0" ev="./bin/tilego-ev run mla-decode --heads $h $R --splits 0" \
    s116="./bin/tilego run mla-decode --heads $h $R --splits 0 --sms 116" s100="./bin/tilego run mla-decode --heads $h $R --splits 0 --sms 100" \
    s88="./bin/tilego run mla-decode --heads $h $R --splits 0 --sms 88" 2>&1 | tee -a $OUT/c2-pairs.txt | tail -6 | sed "s/^/mla h_q $h: /" | tee -a $S
  echo "  at $(( $(date +%s) - T0 )) s" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
