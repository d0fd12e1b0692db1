#!/usr/bin/env bash
# Twenty-first session, call 7: the tail split's cost model with pieces over several rounds (kernels/split.go; picks 7 pieces at d128 16k, the one sweep point it cuts): the sweep point with peers, the split path (impl tilego-split) beside the single program, three times; the GPU tests of the tail split and the bench package.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c7-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
SH='seq_q=16384 seq_kv=16384 dim=128 dim_v=128 causal=false'
OUT=/tmp/c7 TESTS=0 SUITES=fa-sweep SHAPE="$SH" timeout 300 bash scripts/gpu-suite.sh run > /tmp/c7-suite.log 2>&1
echo "d128 16k with peers: exit $?" | tee -a $S
cp /tmp/c7/table.txt $OUT/c7-table.txt; cp /tmp/c7/tilego.jsonl $OUT/c7-tilego.jsonl; cp /tmp/c7/peers.jsonl $OUT/c7-peers.jsonl
grep -v '^$' /tmp/c7/table.txt | tee -a $S
for i in 2 3; do ./bin/tilego bench --suite fa-sweep --shape "$SH" --out $OUT/c7-tilego-$i.jsonl 2>/dev/null; echo "bench $i: exit $?" | tee -a $S; done
python3 - $OUT >> $S <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+'/c7-tilego*.jsonl')):
    rs={json.loads(l)['impl']:json.loads(l) for l in open(f)}
    t,s=rs['tilego'],rs['tilego-split']
    print(f.split('/')[-1], 'single %.1f (%s)' % (t['tflops'], ' '.join('%s=%s'%kv for kv in t['config'].items())), 'split %d: %.1f (%s)' % (s.get('splits',0), s['tflops'], ' '.join('%s=%s'%kv for kv in s['config'].items())), 'split/1 %.3f' % (s['tflops']/t['tflops']), 'ok', t['check']['ok'], s['check']['ok'])
PY
tail -3 $S
t() { local name=$1 to=$2; shift 2; local t0=$(date +%s); timeout $to "$@" > $OUT/c7-$name.log 2>&1; local rc=$?
  echo "$name: exit $rc $(grep -c -- '--- PASS' $OUT/c7-$name.log) pass $(grep -c -- '--- FAIL' $OUT/c7-$name.log) fail ($(( $(date +%s) - t0 )) s)" | tee -a $S
  grep -A3 -- '--- FAIL' $OUT/c7-$name.log | head -10 | tee -a $S; }
t tail 120 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUFlashAttentionTail|TestGPUFlashAttentionSplit)$'
t bench 150 ./bin/bench.test -test.v
gzip -f $OUT/c7-*.log
