#!/usr/bin/env bash
# Eighteenth session, call 3: the sweep's 512-token points timed as the peers are (L2 flushed before every launch, as triton's do_bench) and as the bench's auto did (back to back, no flush, at inputs over twice the L2), same call, with peers.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c3-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
OUT=/tmp/c3 TESTS=0 SUITES=fa-sweep SHAPE='seq_q=512 ' BENCH_FLAGS="--flush l2" timeout 330 bash scripts/gpu-suite.sh run > /tmp/c3-suite.log 2>&1
echo "512 sweep, flush l2, with peers: exit $?" | tee -a $S
cp /tmp/c3/table.txt $OUT/c3-table.txt; cp /tmp/c3/tilego.jsonl $OUT/c3-l2.jsonl; cp /tmp/c3/peers.jsonl $OUT/c3-peers.jsonl
timeout 200 ./bin/tilego bench --suite fa-sweep --shape 'seq_q=512 ' --flush none --out $OUT/c3-none.jsonl > /dev/null 2>&1
echo "512 sweep, flush none: exit $?" | tee -a $S
python3 - $OUT <<'PY' | tee -a $S
import json, sys
o = sys.argv[1]
def key(s): return 'd%d %s %d' % (s['dim'], 'c' if s['causal'] else '-', s['seq_q'])
peers = {}
for l in open(o + '/c3-peers.jsonl'):
    x = json.loads(l)
    if x.get('impl') == 'sdpa-cudnn' and 'shape' in x and x.get('ms'): peers[key(x['shape'])] = x['ms']
def load(f):
    r = {}
    for l in open(f):
        x = json.loads(l); r[key(x['shape'])] = (x['ms'], x['config'], x.get('flush'))
    return r
l2, none = load(o + '/c3-l2.jsonl'), load(o + '/c3-none.jsonl')
for k in l2:
    c = peers.get(k)
    print('%s: cudnn %.4f | l2 %.4f (%.3fx) | none %.4f (%.3fx) | none-l2 %.1f us' % (k, c or 0, l2[k][0], c / l2[k][0] if c else 0, none[k][0], c / none[k][0] if c else 0, (none[k][0] - l2[k][0]) * 1000))
PY
cat /tmp/c3/table.txt
