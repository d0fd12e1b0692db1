#!/usr/bin/env bash
# Thirty-third session, call 1: MLA's V0 (warpgroup 0's share of V's 512 columns under Handoff; default half):
# registers and spills per V0, the MLA GPU tests (V0 cases new), then alternating pairs (round 1 checked)
# of V0 = 192 / 128 / 320 against the default at compute-bound points; the combine with launch bounds of 4
# blocks an SM (a hand edit) at b64 kv8k.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
for v in 256 192 128 320; do
  ./bin/tilego run mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0 --repeats 5 --json --config "v0=$v" > /tmp/r$v.json 2>&1
  python3 -c "import json,sys; d=json.load(open('/tmp/r$v.json')); print('v0=$v', 'regs', d.get('regs'), 'local', d.get('local_bytes'), 'ms %.4f'%d['ms'], 'tf %.1f'%d['tflops'], 'ok', d['check']['ok'])" 2>&1 | tee -a $S || tail -5 /tmp/r$v.json | tee -a $S
done
echo "  at $(( $(date +%s) - T0 )) s" | tee -a $S
timeout 200 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode' -test.v > /tmp/t.log 2>&1
echo "tests: exit $?, $(grep -c -- '--- PASS' /tmp/t.log) passed, $(grep -c -- '--- FAIL' /tmp/t.log) failed at $(( $(date +%s) - T0 )) s" | tee -a $S
grep -- '--- FAIL' /tmp/t.log | head | tee -a $S; gzip -c /tmp/t.log > $OUT/c1-test.log.gz
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192" "--batch 64 --heads 128 --seq-q 2 --mean-kv 4096" "--batch 64 --heads 128 --mean-kv 32768" "--batch 64 --heads 128 --mean-kv 4096"; do
  R="$pt --splits 0 --repeats 30 --json"
  echo "== $pt" >> $OUT/c1-pairs.txt
  timeout 150 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $R" v192="./bin/tilego run mla-decode $R --config v0=192" v128="./bin/tilego run mla-decode $R --config v0=128" v320="./bin/tilego run mla-decode $R --config v0=320" 2>&1 | tee -a $OUT/c1-pairs.txt | tail -5 | sed "s/^/mla $pt: /" | tee -a $S
  echo "  at $(( $(date +%s) - T0 )) s" | tee -a $S
done
R="--batch 64 --heads 128 --mean-kv 8192 --splits 0 --repeats 30 --json"
echo "== combine lb4" >> $OUT/c1-pairs.txt
timeout 100 python3 scripts/pairs.py --rounds 4 base="./bin/tilego run mla-decode $R" lb4="TILEGO_SOURCE=mla_combine=bin/comb-lb4.cu ./bin/tilego run mla-decode $R" 2>&1 | tee -a $OUT/c1-pairs.txt | tail -3 | sed "s/^/combine lb4: /" | tee -a $S
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
