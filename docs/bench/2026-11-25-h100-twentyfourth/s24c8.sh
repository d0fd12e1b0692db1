#!/usr/bin/env bash
# Twenty-fourth session, call 8: drawn causal walks in head order with the last group longest first (TILEGO_XORDER=heads, a trial) against the pairs walk and the longest-first draw; d64 causal 512 grid configs. Back to back, 3 rounds (round 1 checked); ncu DRAM bytes of the d256 ones.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c8-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
B="--batch 32 --heads 8 --seq-q 512 --seq-kv 512 --dim 256 --causal"; CB="m=128 n=64 stages=2 threads=256 ws pingpong overlap direct persistent"
C="--batch 16 --heads 8 --seq-q 1024 --seq-kv 1024 --dim 256 --causal"
E="--batch 32 --heads 16 --seq-q 512 --seq-kv 512 --dim 128 --causal"; CE="m=128 n=128 stages=2 threads=256 ws pingpong overlap persistent"
G="--batch 32 --heads 32 --seq-q 512 --seq-kv 512 --dim 64 --causal"
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
  TILEGO_XORDER=heads r b hdraw $chk "$CB draw" $B
  TILEGO_XORDER=heads r b hdrawnopp $chk "m=128 n=64 stages=2 threads=256 ws overlap direct persistent pingpong=false draw" $B
  r c base $chk "$CB" $C
  r c draw $chk "$CB draw" $C
  TILEGO_XORDER=heads r c hdraw $chk "$CB draw" $C
  r e base $chk "$CE" $E
  r e draw $chk "$CE draw" $E
  TILEGO_XORDER=heads r e hdraw $chk "$CE draw" $E
  r g base $chk "m=64 n=64 stages=2 threads=128" $G
  r g s3 $chk "m=64 n=64 stages=3 threads=128" $G
  r g n128 $chk "m=64 n=128 stages=2 threads=128" $G
  r g n32 $chk "m=64 n=32 stages=2 threads=128" $G
  r g n32s3 $chk "m=64 n=32 stages=3 threads=128" $G
  r g m128 $chk "m=128 n=64 stages=2 threads=256" $G
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
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,dram__throughput.avg.pct_of_peak_sustained_elapsed
n() { local tag=$1; shift; echo "== $tag" >> $S; ncu --clock-control none --metrics $M --kernel-name flash_attention -c 1 "$@" 2>/dev/null | grep -E 'dram__|gpu__time|lts__' >> $S; }
TILEGO_XORDER=heads n b-hdraw ./bin/tilego run flash-attention --layout bshd --repeats 1 --check=false --config "$CB draw" $B
n b-base ./bin/tilego run flash-attention --layout bshd --repeats 1 --check=false --config "$CB" $B
grep -E '==|dram__bytes|time_dur|hit_rate|dram__thr' $S | awk '{print $1, $NF, $(NF-1)}'
