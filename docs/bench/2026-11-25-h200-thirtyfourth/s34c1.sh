#!/usr/bin/env bash
# Thirty-fourth session, call 1. (a) The epilogue with one barrier (epi_edit.py) and the first piece's second
# page issued after Q and the first page landed (p1late_edit.py): their split GPU tests, then pairs with and
# without an L2 flush before each launch (tilego run --flush-l2, new). (b) Per-page stamps of each block's
# first piece (pages_edit.py) at b64 / b128 kv8k, flushed and not. (c) b128 kv32k's slow launches: the bench's
# per-launch times (times_ms, new) with nvidia-smi's clocks and throttle reasons logged beside.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c1-summary.txt; D=docs/bench/2026-11-25-h200-thirtyfourth
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv | tee -a $S
T='^TestGPUMLADecode$/^sm_90a/(split_sched_hq128_handoff|split_3parts_hq128_handoff)$'
for v in epi p1late; do
  TILEGO_SOURCE=mla_decode=bin/$v.cu timeout 90 ./bin/cuda_backend.test -test.run "$T" -test.v > $OUT/c1-$v-test.log 2>&1
  echo "$v tests: exit $?, $(grep -c -- '--- PASS' $OUT/c1-$v-test.log) passed, $(grep -c -- '--- FAIL' $OUT/c1-$v-test.log) failed" | tee -a $S
done
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192"; do
  R="$pt --splits 0 --repeats 30 --json"
  echo "== $pt" >> $OUT/c1-pairs.txt
  timeout 150 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $R --flush-l2" \
    epi="TILEGO_SOURCE=mla_decode=bin/epi.cu ./bin/tilego run mla-decode $R --flush-l2" \
    p1late="TILEGO_SOURCE=mla_decode=bin/p1late.cu ./bin/tilego run mla-decode $R --flush-l2" \
    noflush="./bin/tilego run mla-decode $R" 2>&1 | tee -a $OUT/c1-pairs.txt | tail -5 | sed "s/^/mla $pt: /" | tee -a $S
done
for run in "64 --flush-l2" "64 " "128 --flush-l2"; do
  set -- $run; b=$1; f=${2:-}; tag=b$b${f:+-flush}
  TILEGO_SOURCE=mla_decode=bin/pages.cu TILEGO_STAMPS=$OUT/$tag timeout 60 ./bin/tilego run mla-decode --batch $b --heads 128 --mean-kv 8192 --splits 0 --repeats 10 --json $f > $OUT/$tag.json 2>$OUT/$tag.err
  echo "== pages $tag: $(python3 -c "import json; s=json.load(open('$OUT/$tag.json')); print(s['time_ms'], s.get('ok'))" 2>&1)" | tee -a $S
  python3 $D/pages_read.py $OUT/$tag.mla_decode.txt 2>&1 | tee -a $S
  python3 -c "
v=open('$OUT/$tag.mla_decode.txt').read().split(); open('/tmp/cut.txt','w').write('\n'.join(v[:264*51]))"
  python3 scripts/mla_stamps_read.py /tmp/cut.txt 2>&1 | tee $OUT/$tag-summary.txt | tail -6 | tee -a $S
  gzip -f $OUT/$tag.mla_decode.txt
done
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 200 > $OUT/c1-smi.csv 2>&1 &
SMI=$!
for i in 1 2; do
  timeout 200 ./bin/tilego bench --suite mla --shape 'batch=128 heads=128 seq_q=1 mean_kv=32768 ' --out $OUT/c1-b128kv32k-$i.jsonl 2>>$OUT/c1-bench.log
  python3 -c "
import json
for l in open('$OUT/c1-b128kv32k-$i.jsonl'):
    r=json.loads(l); t=r.get('times_ms') or []
    print('bench b128 kv32k run $i: ms %.4f tflops %.1f spread %.4f ok %s' % (r['ms'], r['tflops'], r.get('spread_ms',0), r.get('check',{}).get('ok')))
    print('  times:', ' '.join('%.3f' % x for x in t))
" 2>&1 | tee -a $S
done
kill $SMI
python3 - $OUT/c1-smi.csv <<'PY' | tee -a $S
import sys, collections
rows=[l.strip().split(', ') for l in open(sys.argv[1]) if l[0].isdigit() or l.startswith('20')]
c=collections.Counter(r[-1] for r in rows)
sm=[int(r[1].split()[0]) for r in rows if r[1].split()[0].isdigit()]
print('smi samples', len(rows), 'sm clock min/max', min(sm) if sm else '-', max(sm) if sm else '-', 'throttle reasons', dict(c))
PY
