#!/usr/bin/env bash
# Twenty-fourth session, call 4: DRAM bytes and L2 hit rates (ncu, caches flushed clean before each profiled launch, clocks not locked) of tilego's causal 512 picks and cuDNN's/FA2's kernels.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c4-summary.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed
p() { ncu --clock-control none --metrics $M --csv "$@" 2>/dev/null | grep -v '^==' ; }
for a in "64 32 32 m=64 n=64 stages=2 threads=128" "128 32 16 m=128 n=128 stages=2 threads=256 ws persistent pingpong=false" "256 32 8 m=128 n=64 stages=2 threads=256 ws pingpong overlap direct persistent" "128 32 16 m=128 n=128 stages=2 threads=256 ws pingpong overlap persistent"; do
  set -- $a; d=$1 b=$2 h=$3; shift 3
  echo "== tilego d$d $*" >> $S
  p --kernel-name flash_attention -c 2 ./bin/tilego run flash-attention --layout bshd --repeats 1 --check=false --batch $b --heads $h --seq-q 512 --seq-kv 512 --dim $d --causal --config "$*" >> $S
done
echo "== torch" >> $S
p -c 60 python3 bin/ncucmp.py >> $S
python3 - $S <<'PY'
import sys, csv, io
cur = None; rows = {}
order = []
for line in open(sys.argv[1]):
    if line.startswith('== '): cur = line[3:].strip(); continue
    if not line.startswith('"'): continue
    r = next(csv.reader(io.StringIO(line)))
    if r[0] == 'ID': hdr = r; continue
    d = dict(zip(hdr, r))
    key = (cur, d['ID'], d['Kernel Name'][:60])
    if key not in rows: rows[key] = {}; order.append(key)
    rows[key][d['Metric Name']] = d['Metric Value'] + d.get('Metric Unit', '')
for k in order:
    m = rows[k]
    if 'distribution' in k[2] or 'elementwise' in k[2]: continue
    print('%-40s %-3s %-60s %s' % (k[0][:40], k[1], k[2], ' '.join('%s=%s' % (n.split('__')[1].split('.')[0][:18], m[n]) for n in sorted(m))))
PY
