#!/usr/bin/env bash
# Thirty-second session, call 1: MLA's combine, hand-written without shared memory or block barriers
# (combine-probe.cu.in: f2 = two splits' loads in flight, f4 = four; none = a combine that returns at once,
# outputs wrong: the chain without it), against the generated one (base), alternating pairs, round 1 checked;
# then the fa-bwd suite's first run with its peers, in what time is left.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
for pt in "--batch 64 --heads 128" "--batch 128 --heads 128" "--batch 64 --heads 64"; do
  h=${pt##* }; R="$pt --mean-kv 8192 --splits 0 --repeats 30 --json"
  echo "== $pt" >> $OUT/c1-pairs.txt
  timeout 170 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $R" \
    f2="TILEGO_SOURCE=mla_combine=bin/src/comb-f2-h$h.cu ./bin/tilego run mla-decode $R" \
    f4="TILEGO_SOURCE=mla_combine=bin/src/comb-f4-h$h.cu ./bin/tilego run mla-decode $R" \
    none="TILEGO_SOURCE=mla_combine=bin/src/comb-none-h$h.cu ./bin/tilego run mla-decode $R" 2>&1 | tee -a $OUT/c1-pairs.txt | tail -5 | sed "s/^/mla $pt: /" | tee -a $S
  echo "  at $(( $(date +%s) - T0 )) s" | tee -a $S
done
left=$(( 560 - ($(date +%s) - T0) ))
if [ $left -gt 120 ]; then
  SUITES=fa-bwd TESTS=0 timeout $left bash scripts/gpu-suite.sh run > $OUT/c1-bwd.log 2>&1; echo "fa-bwd exit $?" | tee -a $S
  tail -25 $OUT/c1-bwd.log | tee -a $S
fi
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
