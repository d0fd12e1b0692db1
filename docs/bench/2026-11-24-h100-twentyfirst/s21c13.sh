#!/usr/bin/env bash
# Twenty-first session, call 13: the final tree (the split path's shape now comes from the problem, kernels.AttnShapeOf): the bench package's GPU tests, and the sweep's d128 16k point (single program and the model's split path) twice more.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c13-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
timeout 200 ./bin/bench.test -test.v > $OUT/c13-bench.log 2>&1; echo "bench tests: exit $? $(grep -c -- '--- PASS' $OUT/c13-bench.log) pass $(grep -c -- '--- FAIL' $OUT/c13-bench.log) fail" | tee -a $S
SH='seq_q=16384 seq_kv=16384 dim=128 dim_v=128 causal=false'
for i in 1 2; do ./bin/tilego bench --suite fa-sweep --shape "$SH" --out $OUT/c13-tilego-$i.jsonl 2>/dev/null; echo "bench $i: exit $?" | tee -a $S; done
python3 - $OUT >> $S <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+'/c13-tilego*.jsonl')):
    rs={json.loads(l)['impl']:json.loads(l) for l in open(f)}
    t,s=rs['tilego'],rs['tilego-split']
    print(f.split('/')[-1], 'single %.1f' % t['tflops'], 'split %d: %.1f' % (s.get('splits',0), s['tflops']), 'split/1 %.3f' % (s['tflops']/t['tflops']), 'ok', t['check']['ok'], s['check']['ok'])
PY
tail -3 $S
gzip -f $OUT/c13-*.log
