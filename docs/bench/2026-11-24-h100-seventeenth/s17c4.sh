#!/usr/bin/env bash
# Seventeenth session, call 4: causal pairs shorter tile first (kernels.causalPair). A (1e6d205, longer first) / B interleaved on the causal walks 512-2k;
# ncu d256 causal 512 (DRAM bytes, L2 hits) on B; cuDNN's kernel at that shape; persistent GPU tests.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
S=$OUT/c4-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
SH='seq_q=(512|1024|2048) .*dim=(64|128|256) .*causal=true'
M='persistent=true'
for r in A1 B1 A2 B2; do
  bin=./bin/tilego; case $r in A*) bin=./bin/tilego-ab;; esac
  timeout 100 $bin bench --suite fa-sweep --shape "$SH" --match "$M" --repeats 30 --out $OUT/c4-$r.jsonl > /tmp/c4-$r.log 2>&1; echo "$r exit $?" | tee -a $S
done
python3 - $OUT/c4-A1.jsonl $OUT/c4-B1.jsonl $OUT/c4-A2.jsonl $OUT/c4-B2.jsonl <<'PY' | tee -a $S
import json, sys, collections
t = collections.defaultdict(dict)
for lab, f in zip(['A1','B1','A2','B2'], sys.argv[1:]):
    for l in open(f):
        x = json.loads(l); s = x['shape']
        key = 'd%d %s %d' % (s['dim'], 'c' if s['causal'] else '-', s['seq_q'])
        for tr in x['tried']:
            c = tr['config']; ck = ('pp ' if c.get('pingpong') else '   ') + ('ov ' if c.get('overlap') else '   ') + ('dir ' if c.get('direct') else '    ') + 'n%d t%d s%d' % (c['n'], c['threads'], c['stages'])
            if tr.get('ms'): t[(key, ck)][lab] = tr['ms']
best = collections.defaultdict(lambda: [1e9, 1e9])
for k in sorted(t):
    v = t[k]
    if len(v) < 4: continue
    a = min(v['A1'], v['A2']); b = min(v['B1'], v['B2'])
    best[k[0]][0] = min(best[k[0]][0], a); best[k[0]][1] = min(best[k[0]][1], b)
    print('%-12s %-26s A %.4f %.4f B %.4f %.4f  B/A speed %.3f' % (k[0], k[1], v['A1'], v['A2'], v['B1'], v['B2'], a / b))
for k in sorted(best): print('BEST %-12s A %.4f B %.4f speed %.3f' % (k, best[k][0], best[k][1], best[k][0] / best[k][1]))
PY
CFG="m=128 n=64 stages=2 threads=256 ws=true pingpong=true overlap=true direct=true persistent=true"
for r in ab B; do
  bin=./bin/tilego; [ $r = ab ] && bin=./bin/tilego-ab
  timeout 100 ncu -k regex:flash -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct -o /tmp/tg$r -f $bin run flash-attention --batch 32 --heads 8 --seq-q 512 --dim 256 --causal --layout bshd --config "$CFG" --repeats 1 > /tmp/ncu$r.log 2>&1
  echo "ncu $r: exit $?" | tee -a $S
  ncu -i /tmp/tg$r.ncu-rep --page details > $OUT/c4-ncu-$r.txt 2>&1
  grep -E "Duration|DRAM Throughput|dram__bytes|lts__t_sector_hit|L2 Hit Rate" $OUT/c4-ncu-$r.txt | tee -a $S
done
timeout 100 ncu --launch-skip 3 -c 1 --section SpeedOfLight --section LaunchStats --section Occupancy --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct -o /tmp/cd -f python3 scripts/ncu_peer.py --impl sdpa-cudnn --batch 32 --heads 8 --seq 512 --dim 256 --causal > /tmp/ncu2.log 2>&1
echo "ncu cudnn: exit $?" | tee -a $S
ncu -i /tmp/cd.ncu-rep --page details > $OUT/c4-ncu-cudnn.txt 2>&1
grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|dram__bytes|lts__t_sector_hit|Registers Per|Dynamic Shared|Block Size|Grid Size|Threads  " $OUT/c4-ncu-cudnn.txt | cut -c1-200 | tee -a $S
t0=$(date +%s)
timeout 200 ./bin/cuda_backend.test -test.v -test.run '^TestGPUPersistent$' > /tmp/t-p.log 2>&1
echo "persistent: exit $? $(grep -c -- '--- PASS' /tmp/t-p.log) pass $(grep -c -- '--- FAIL' /tmp/t-p.log) fail ($(( $(date +%s) - t0 )) s)" | tee -a $S
grep -- '--- FAIL' /tmp/t-p.log | head -5 | tee -a $S
