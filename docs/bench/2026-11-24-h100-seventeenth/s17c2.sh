#!/usr/bin/env bash
# Seventeenth session, call 2: the walk's query tile freed in the main loop's last iteration (walk.go walkEarly).
# Persistent GPU tests; A (HEAD) / B interleaved on the walks it changes (d256 and d128 512-1k); d256 512-2k with peers.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
t0=$(date +%s)
timeout 200 ./bin/cuda_backend.test -test.v -test.run '^TestGPUPersistent$' > /tmp/t-p.log 2>&1
echo "persistent: exit $? $(grep -c -- '--- PASS' /tmp/t-p.log) pass $(grep -c -- '--- FAIL' /tmp/t-p.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' /tmp/t-p.log | tail -1)" | tee -a $S
grep -- '--- FAIL' /tmp/t-p.log | head -5 | tee -a $S
SH='seq_q=(512|1024) .*dim=(128|256) '
M='overlap=true (direct=true )?persistent=true'
for r in A1 B1 A2 B2; do
  bin=./bin/tilego; case $r in A*) bin=./bin/tilego-ab;; esac
  timeout 100 $bin bench --suite fa-sweep --shape "$SH" --match "$M" --repeats 30 --out $OUT/c2-$r.jsonl > /dev/null 2>&1; echo "$r exit $?" | tee -a $S
done
python3 - $OUT/c2-A1.jsonl $OUT/c2-B1.jsonl $OUT/c2-A2.jsonl $OUT/c2-B2.jsonl <<'PY' | tee -a $S
import json, sys, collections
t = collections.defaultdict(dict)
for lab, f in zip(['A1','B1','A2','B2'], sys.argv[1:]):
    for l in open(f):
        x = json.loads(l); s = x['shape']
        key = 'd%d %s %d' % (s['dim'], 'c' if s['causal'] else '-', s['seq_q'])
        for tr in x['tried']:
            c = tr['config']; ck = ('pp ' if c.get('pingpong') else '   ') + ('dir ' if c.get('direct') else '    ') + 'n%d' % c['n']
            if tr.get('ms'): t[(key, ck)][lab] = tr['ms']
for k in sorted(t):
    v = t[k]
    if len(v) < 4: continue
    a = min(v['A1'], v['A2']); b = min(v['B1'], v['B2'])
    print('%-12s %-14s A %.4f %.4f B %.4f %.4f  B/A speed %.3f' % (k[0], k[1], v['A1'], v['A2'], v['B1'], v['B2'], a / b))
PY
OUT=/tmp/c2 TESTS=0 SUITES=fa-sweep SHAPE='seq_q=(512|1024|2048) .*dim=256 ' timeout 250 bash scripts/gpu-suite.sh run > /tmp/c2-suite.log 2>&1
echo "d256 short sweep with peers: exit $?" | tee -a $S
cp /tmp/c2/table.txt $OUT/c2-table.txt; cp /tmp/c2/tilego.jsonl $OUT/c2-tilego.jsonl; cp /tmp/c2/peers.jsonl $OUT/c2-peers.jsonl
cat /tmp/c2/table.txt
