#!/usr/bin/env bash
# Twenty-first session, call 11: programmatic dependent launch for chains (every sm_90 kernel waits for the kernel before it and lets the next start, first thing; a chain launches its later steps with cuLaunchKernelEx's programmatic serialization). GPU tests of every chain (MLA's split path, FlashAttention's split and tail), then MLA at b64 kv8k (h_q 16/32/64 memory-bound, 128 compute-bound) A = 9cf7d53 against B = this tree, interleaved twice; and TestGPUChainTime's chain against its split kernel alone.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c11-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
t() { local name=$1 to=$2; shift 2; local t0=$(date +%s); TILEGO_CACHE=/tmp/cache-$name timeout $to "$@" > $OUT/c11-$name.log 2>&1; local rc=$?
  echo "$name: exit $rc $(grep -c -- '--- PASS' $OUT/c11-$name.log) pass $(grep -c -- '--- FAIL' $OUT/c11-$name.log) fail ($(( $(date +%s) - t0 )) s)" >> $S
  grep -B2 -A6 -- '--- FAIL' $OUT/c11-$name.log | head -20 >> $S; }
t mla 240 ./bin/cuda_backend.test -test.v -test.run '^TestGPUMLADecode$' &
t split 240 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUFlashAttentionSplit|TestGPUFlashAttentionTail|TestGPUChainTime)$' &
wait
grep -h "chain .*split kernel alone" $OUT/c11-split.log | tee -a $S
SH='batch=64 heads=(16|32|64|128) seq_q=1 mean_kv=8192 '
M='ws=true splitn=true roles=true'
for i in 1 2; do
  ./bin/tilego-ab bench --suite mla --shape "$SH" --match "$M" --out $OUT/c11-A$i.jsonl 2>>/tmp/c11-bench.err; echo "A$i: exit $?" | tee -a $S
  ./bin/tilego bench --suite mla --shape "$SH" --match "$M" --out $OUT/c11-B$i.jsonl 2>>/tmp/c11-bench.err; echo "B$i: exit $?" | tee -a $S
done
python3 - $OUT >> $S <<'PY'
import json,sys,glob,statistics as st
d={}
for f in sorted(glob.glob(sys.argv[1]+'/c11-[AB]*.jsonl')):
    side=f.split('/')[-1][4]
    for l in open(f):
        r=json.loads(l)
        if r['impl']!='tilego-split': continue
        s=r['shape']; k='b%d h%d kv%d' % (s['batch'],s['heads'],s['mean_kv'])
        d.setdefault(k,{}).setdefault(side,[]).append((r['ms'],r['tflops'],r.get('gbps',0),r['check']['ok']))
for k,v in d.items():
    a,b=v.get('A',[]),v.get('B',[])
    print(k,'A ms',[round(x[0],4) for x in a],'B ms',[round(x[0],4) for x in b],'B/A (best) %.3f' % (min(x[0] for x in a)/min(x[0] for x in b)) if a and b else '', 'GB/s best A %.0f B %.0f' % (max(x[2] for x in a),max(x[2] for x in b)) if a and b else '', 'ok', all(x[3] for x in a+b))
PY
tail -6 $S
gzip -f $OUT/c11-*.log
