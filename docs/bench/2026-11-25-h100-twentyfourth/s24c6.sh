#!/usr/bin/env bash
# Twenty-fourth session, call 6: ncu DRAM bytes and L2 hit rates of the pairs walk against the drawn walk (d256 and d128 causal 512), and the drawn walk in pair order at d256 (TILEGO_XORDER=pair, a trial); then timed back to back, 3 rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c6-summary.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
B="--batch 32 --heads 8 --seq-q 512 --seq-kv 512 --dim 256 --causal"; CB="m=128 n=64 stages=2 threads=256 ws pingpong overlap direct persistent"
E="--batch 32 --heads 16 --seq-q 512 --seq-kv 512 --dim 128 --causal"; CE="m=128 n=128 stages=2 threads=256 ws persistent pingpong=false"; CE2="m=128 n=128 stages=2 threads=256 ws pingpong overlap direct persistent draw"
n() { local tag=$1; shift; echo "== $tag" >> $S; ncu --clock-control none --metrics $M --kernel-name flash_attention -c 1 "$@" 2>/dev/null | grep -E 'dram__|gpu__time|lts__' >> $S; }
n b-base ./bin/tilego run flash-attention --layout bshd --repeats 1 --check=false --config "$CB" $B
n b-draw ./bin/tilego run flash-attention --layout bshd --repeats 1 --check=false --config "$CB draw" $B
TILEGO_XORDER=pair n b-pairdraw ./bin/tilego run flash-attention --layout bshd --repeats 1 --check=false --config "$CB draw" $B
n e-base ./bin/tilego run flash-attention --layout bshd --repeats 1 --check=false --config "$CE" $E
n e-draw ./bin/tilego run flash-attention --layout bshd --repeats 1 --check=false --config "$CE2" $E
r() { local tag=$1 var=$2 chk=$3 cfg=$4; shift 4
  timeout 120 ./bin/tilego run flash-attention --layout bshd --repeats 30 --json --check=$chk --config "$cfg" "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('%-4s %-12s ms %.4f TF %.1f ok %s' % ('$tag', '$var', r['time_ms'], r.get('tflops',0), r.get('ok')))
" 2>&1 | tee -a $S || (echo "$tag $var failed: $(tail -3 /tmp/r.err)" | tee -a $S); }
for i in 1 2 3; do
  chk=false; [ $i = 1 ] && chk=true
  r b base $chk "$CB" $B
  r b draw $chk "$CB draw" $B
  TILEGO_XORDER=pair r b pairdraw $chk "$CB draw" $B
  TILEGO_XORDER=pair r b ovpairdraw $chk "m=128 n=64 stages=2 threads=256 ws overlap direct persistent pingpong=false draw" $B
done
python3 - $S <<'PY' | tee -a $S
import sys,re,statistics as st
d={}
for l in open(sys.argv[1]):
    m=re.match(r'(\w+)\s+(\w+)\s+ms ([\d.]+)',l)
    if m: d.setdefault(m[1],{}).setdefault(m[2],[]).append(float(m[3]))
for tag,v in d.items():
    b=st.median(v['base'])
    print(tag, ' '.join('%s %.4f (%.3f)' % (k, st.median(x), st.median(x)/b) for k,x in v.items()))
PY
grep -E '==|dram__bytes|time_dur|hit_rate|lts__t_sectors.sum|dram__thr' $S | awk '{print $1, $NF, $(NF-1)}'
