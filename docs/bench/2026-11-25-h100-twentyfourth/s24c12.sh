#!/usr/bin/env bash
# Twenty-fourth session, call 12: compute-sanitizer memcheck, racecheck and synccheck on the small FlashAttention/GEMM cases (the drawn causal walks among them: san_d64 ws_ovpp_draw, ws_ovpp_direct_draw) and MLA's, and the runtime, jit, autotune and bench GPU tests.
cd "$(dirname "$0")/.."
mkdir -p $OUT
OUT=/tmp/san SAN=1 TESTS=1 TEST_PKGS="runtime jit autotune bench" GUARDED=0 BENCH=0 PEERS=0 bash scripts/gpu-suite.sh run > /tmp/san-run.log 2>&1
echo "san run: exit $?"
tail -25 /tmp/san-run.log
cp /tmp/san-run.log $OUT/c12-run.log
for f in /tmp/san/san-*.log; do grep -E -- '--- (PASS|FAIL)|SUMMARY' $f > $OUT/c12-$(basename $f); done
# Then K and V loaded evict-last (bin/abl/kvel.py) in the d256 causal 512 pairs walk (p) and the drawn walk in head order (h); back to back, 3 rounds, round 1 checked; ncu DRAM bytes.
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
S=$OUT/c12-summary.txt
B="--batch 32 --heads 8 --seq-q 512 --seq-kv 512 --dim 256 --causal"; CB="m=128 n=64 stages=2 threads=256 ws pingpong overlap direct persistent"
r() { local tag=$1 var=$2 chk=$3 cfg=$4; shift 4
  export TILEGO_SOURCE=flash_attention=bin/abl/$tag-$var.cu
  timeout 120 ./bin/tilego run flash-attention --layout bshd --repeats 30 --json --check=$chk --config "$cfg" "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('%-4s %-9s ms %.4f TF %.1f ok %s' % ('$tag', '$var', r['time_ms'], r.get('tflops',0), r.get('ok')))
" 2>&1 | tee -a $S || (echo "$tag $var failed: $(tail -3 /tmp/r.err)" | tee -a $S); unset TILEGO_SOURCE; }
for i in 1 2 3; do
  chk=false; [ $i = 1 ] && chk=true
  for v in base kvel; do r p $v $chk "$CB" $B; r h $v $chk "$CB draw" $B; done
done
python3 - $S <<'PY' | tee -a $S
import sys,re,statistics as st
d={}
for l in open(sys.argv[1]):
    m=re.match(r'(\w+)\s+(\w+)\s+ms ([\d.]+)',l)
    if m: d.setdefault(m[1],{}).setdefault(m[2],[]).append(float(m[3]))
pb=st.median(d['p']['base'])
for tag,v in d.items():
    print(tag, ' '.join('%s %.4f (%.3f of p base)' % (k, st.median(x), st.median(x)/pb) for k,x in v.items()))
PY
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
for tv in "p base" "p kvel" "h base" "h kvel"; do set -- $tv; cfg="$CB"; [ $1 = h ] && cfg="$CB draw"
  echo "== $1-$2" >> $S; TILEGO_SOURCE=flash_attention=bin/abl/$1-$2.cu ncu --clock-control none --metrics $M --kernel-name flash_attention -c 1 ./bin/tilego run flash-attention --layout bshd --repeats 1 --check=false --config "$cfg" $B 2>/dev/null | grep -E 'dram__|gpu__time' >> $S; done
grep -E '==|dram__bytes|time_dur|dram__thr' $S | awk '{print $1, $NF, $(NF-1)}'
