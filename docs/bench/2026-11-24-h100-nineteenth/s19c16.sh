#!/usr/bin/env bash
# Nineteenth session, call 16: the balance of the 512-token points beside cuDNN's (ncu at the GPU's own clock): duration, SM active cycles mean and busiest, for the sweep's picks at d128 (causal or not), d256 causal and d64 non-causal.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c16-summary.txt
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_active.avg,sm__cycles_active.max,launch__grid_size,dram__bytes_read.sum
pt() { # label dim causal batch heads config
  l=$1; d=$2; c=$3; b=$4; h=$5; cfg=$6; cf=(); pc=()
  [ "$c" = 1 ] && cf=(--causal) && pc=(--causal)
  timeout 90 ncu --clock-control none --metrics $M -k regex:flash -c 1 ./bin/tilego run flash-attention --batch $b --heads $h --seq-q 512 --dim $d --layout bshd "${cf[@]}" --config "$cfg" --repeats 1 --check=false > /tmp/a.txt 2>&1
  timeout 90 ncu --clock-control none --metrics $M --launch-skip 3 -c 1 python3 scripts/ncu_peer.py --impl sdpa-cudnn --batch $b --heads $h --seq 512 --dim $d "${pc[@]}" > /tmp/b.txt 2>&1
  python3 - "$l" <<'PY' | tee -a $S
import re, sys
def get(f):
    t = open(f).read(); v = {}
    for k in ('gpu__time_duration.sum', 'sm__cycles_active.avg', 'sm__cycles_active.max', 'launch__grid_size', 'sm__cycles_elapsed.avg.per_second', 'dram__bytes_read.sum'):
        m = re.findall(re.escape(k) + r'\s+(\S+)?\s+([\d.,]+)', t)
        v[k] = (m[-1][0], float(m[-1][1].replace(',', ''))) if m else ('', 0)
    return v
a, b = get('/tmp/a.txt'), get('/tmp/b.txt')
def row(n, v):
    avg, mx = v['sm__cycles_active.avg'][1], v['sm__cycles_active.max'][1]
    return '%s %s %s, %s %s GHz, grid %d, DRAM read %s %s, SM cycles mean %.0f busiest %.0f (+%.1f%%)' % (n, v['gpu__time_duration.sum'][1], v['gpu__time_duration.sum'][0], v['sm__cycles_elapsed.avg.per_second'][1], '', v['launch__grid_size'][1], v['dram__bytes_read.sum'][1], v['dram__bytes_read.sum'][0], avg, mx, 100 * (mx / avg - 1) if avg else 0)
print(sys.argv[1]); print('  tilego ' + row('', a)); print('  cuDNN  ' + row('', b))
PY
}
pt "d128 512" 128 0 32 16 "m=128 n=128 stages=2 threads=256 ws=true pingpong=true overlap=true persistent=true"
pt "d128 causal 512" 128 1 32 16 "m=128 n=128 stages=2 threads=256 ws=true persistent=true"
pt "d256 causal 512" 256 1 32 8 "m=128 n=64 stages=2 threads=256 ws=true pingpong=true overlap=true direct=true persistent=true"
pt "d64 512" 64 0 32 32 "m=128 n=128 stages=3 threads=256 ws=true pingpong=true overlap=true direct=true persistent=true"
pt "d64 causal 512" 64 1 32 32 "m=64 n=64 stages=2 threads=128"
