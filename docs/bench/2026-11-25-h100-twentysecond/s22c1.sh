#!/usr/bin/env bash
# Twenty-second session, call 1: the online softmax keeps a row's old maximum until it grows by 2^8 (kernels/softmax.go), so the rescale factor stays exactly one, and the compiler skips the accumulator's rescale in warps whose factors are all one (target/cuda/emit_par.go). GPU tests of FlashAttention (plain, deferred, cluster, split, tail) and MLA on this tree, then A = 14fc618 against B = this tree, tilego run back to back, four rounds, at the sweep's d256/d128/d64 points and MLA b64 kv8k.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
t() { local name=$1 to=$2; shift 2; local t0=$(date +%s); TILEGO_CACHE=/tmp/cache-$name timeout $to "$@" > /tmp/c1-$name.log 2>&1; local rc=$?
  echo "$name: exit $rc $(grep -c -- '--- PASS' /tmp/c1-$name.log) pass $(grep -c -- '--- FAIL' /tmp/c1-$name.log) fail $(grep -c -- '--- SKIP' /tmp/c1-$name.log) skip ($(( $(date +%s) - t0 )) s)" >> $S
  grep -B2 -A8 -- '--- FAIL' /tmp/c1-$name.log | head -30 >> $S; }
t fa 200 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUFlashAttention|TestGPUFlashAttentionLarge|TestGPURowScale)$' &
t mla 200 ./bin/cuda_backend.test -test.v -test.run '^TestGPUMLADecode$' &
t defcl 200 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUDeferred|TestGPUCluster|TestGPUPersistent)$' &
t split 200 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUFlashAttentionSplit|TestGPUFlashAttentionTail)$' &
wait
tar czf $OUT/c1-tests.tgz -C /tmp c1-fa.log c1-mla.log c1-defcl.log c1-split.log
r() { local bin=$1 tag=$2 k=$3; shift 3; ./bin/$bin run $k --repeats 30 --json "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('%-6s %-14s ms %.4f TF %.1f GBs %.0f ok %s' % ('$bin', '$tag', r['time_ms'], r.get('tflops',0), r.get('gbps',0), r['ok']))
" 2>&1 | tee -a $S || (echo "$bin $tag failed: $(tail -3 /tmp/r.err)" | tee -a $S); }
F="flash-attention --layout bshd"
for i in 1 2 3 4; do for b in tilego-ab tilego; do
  r $b d256-512 $F --batch 32 --heads 8 --seq-q 512 --dim 256
  r $b d256-1k $F --batch 16 --heads 8 --seq-q 1024 --dim 256
  r $b d256-c512 $F --batch 32 --heads 8 --seq-q 512 --dim 256 --causal
  r $b d256-16k $F --batch 1 --heads 8 --seq-q 16384 --dim 256
  r $b d128-512 $F --batch 32 --heads 16 --seq-q 512 --dim 128
  r $b d128-c512 $F --batch 32 --heads 16 --seq-q 512 --dim 128 --causal
  r $b d128-16k $F --batch 1 --heads 16 --seq-q 16384 --dim 128
  r $b d64-1k $F --batch 16 --heads 32 --seq-q 1024 --dim 64
  r $b mla-h128 mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0
  r $b mla-h64 mla-decode --batch 64 --heads 64 --mean-kv 8192 --splits 0
done; done
echo "--- paired B/A (this tree over 14fc618), by time" | tee -a $S
python3 - $S <<'PY' | tee -a $S
import sys,re,statistics as st
d={}
for l in open(sys.argv[1]):
    m=re.match(r'(tilego-ab|tilego)\s+(\S+)\s+ms ([\d.]+) TF ([\d.]+)',l)
    if m: d.setdefault(m[2],{}).setdefault(m[1],[]).append(float(m[3]))
for k,v in d.items():
    a,b=v.get('tilego-ab',[]),v.get('tilego',[])
    rs=[x/y for x,y in zip(a,b)]
    if rs: print('%-12s A ms med %.4f B ms med %.4f  B/A speed: median %.3f (%.3f-%.3f) faster %d/%d' % (k, st.median(a), st.median(b), st.median(rs), min(rs), max(rs), sum(x>1 for x in rs), len(rs)))
PY
