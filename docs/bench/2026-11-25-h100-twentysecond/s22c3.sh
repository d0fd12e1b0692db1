#!/usr/bin/env bash
# Twenty-second session, call 3: call 2 found the skip seldom taken (the factor exp2(mOld·s − m·s) fused to a nonzero rounding error); the factor is now exactly one where the maximum stayed. A = 14fc618, B = this tree, C = this tree with TILEGO_SKIPONES=0 (the kept maximum, no skip), tilego run back to back, four rounds; ncu's FMUL counts of A and B.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c3-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,sm__cycles_active.avg
for spec in "d256-512:--batch 32 --heads 8 --seq-q 512 --dim 256" "d64-1k:--batch 16 --heads 32 --seq-q 1024 --dim 64"; do n=${spec%%:*}; a=${spec#*:}
  for b in tilego-ab tilego; do
    timeout 120 ncu --clock-control none --metrics $M -k regex:flash -c 1 ./bin/$b run flash-attention --layout bshd $a --repeats 1 > /tmp/n.txt 2>&1
    echo "$n $b: $(grep -E 'gpu__time|inst_executed|cycles_active' /tmp/n.txt | awk '{print $1"="$NF}' | tr '\n' ' ')" | tee -a $S
  done
done
r() { local side=$1 tag=$2 k=$3; shift 3; local bin=tilego env=""; [ $side = A ] && bin=tilego-ab; [ $side = C ] && env="TILEGO_SKIPONES=0"
  env $env TILEGO_CACHE=/tmp/cache-$side ./bin/$bin run $k --repeats 30 --json "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('%s %-14s ms %.4f TF %.1f ok %s' % ('$side', '$tag', r['time_ms'], r.get('tflops',0), r['ok']))
" 2>&1 | tee -a $S || (echo "$side $tag failed: $(tail -3 /tmp/r.err)" | tee -a $S); }
F="flash-attention --layout bshd"
for i in 1 2 3 4; do for side in A B C; do
  r $side d256-512 $F --batch 32 --heads 8 --seq-q 512 --dim 256
  r $side d256-1k $F --batch 16 --heads 8 --seq-q 1024 --dim 256
  r $side d256-c512 $F --batch 32 --heads 8 --seq-q 512 --dim 256 --causal
  r $side d256-4k $F --batch 4 --heads 8 --seq-q 4096 --dim 256
  r $side d128-512 $F --batch 32 --heads 16 --seq-q 512 --dim 128
  r $side d128-c512 $F --batch 32 --heads 16 --seq-q 512 --dim 128 --causal
  r $side d128-4k $F --batch 4 --heads 16 --seq-q 4096 --dim 128
  r $side d64-1k $F --batch 16 --heads 32 --seq-q 1024 --dim 64
  r $side mla-h128 mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0
done; done
echo "--- paired speed over A (14fc618)" | tee -a $S
python3 - $S <<'PY' | tee -a $S
import sys,re,statistics as st
d={}
for l in open(sys.argv[1]):
    m=re.match(r'([ABC]) (\S+)\s+ms ([\d.]+) TF ([\d.]+)',l)
    if m: d.setdefault(m[2],{}).setdefault(m[1],[]).append(float(m[3]))
for k,v in d.items():
    out=[]
    for side in 'BC':
        rs=[x/y for x,y in zip(v['A'],v.get(side,[]))]
        if rs: out.append('%s/A median %.3f (%.3f-%.3f) faster %d/%d' % (side, st.median(rs), min(rs), max(rs), sum(x>1 for x in rs), len(rs)))
    print('%-10s A ms %.4f  %s' % (k, st.median(v['A']), '  '.join(out)))
PY
