#!/usr/bin/env bash
# Sixteenth session, call 8: 16-byte fragment stores after a quad exchange (storeQuadsFrom). GPU tests that store fragments to global memory
# (Direct walks, MLA on both paths), memcheck; d256 short points with the Direct walks in the list; MLA A (HEAD 4300b23, pair stores) / B interleaved.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
S=$OUT/c8-summary.txt
timeout 200 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUMLADecode|TestGPUDeferred|TestGPUPersistent|TestGPUFlashAttentionSplit|TestGPUFlashAttentionTail)$' > /tmp/c8-tests.log 2>&1
echo "tests: exit $?, $(grep -c -- '--- PASS' /tmp/c8-tests.log) pass, $(grep -c -- '--- FAIL' /tmp/c8-tests.log) fail" | tee -a $S
grep -- '--- FAIL' /tmp/c8-tests.log | head -5 | tee -a $S
grep -E -- '--- (PASS|FAIL).*direct' /tmp/c8-tests.log | head -6 | tee -a $S
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 ./bin/cuda_backend.test -test.run '^(TestGPUMLADecode$/^sm_90a?/(split_3parts_hq128_handoff|hq128_m64|split_sched_hq32_padded_splitn_ws)$|TestGPUDeferred$/.*direct)' > /tmp/c8-mem.log 2>&1
echo "memcheck: exit $? $(grep -m1 'ERROR SUMMARY' /tmp/c8-mem.log)" | tee -a $S
timeout 200 ./bin/tilego bench --suite fa-sweep --shape 'seq_q=(512|1024) .*dim=256 ' --out $OUT/c8-d256.jsonl > /tmp/c8-bench.log 2>&1
echo "d256 bench exit $?" | tee -a $S
python3 - $OUT/c8-d256.jsonl <<'PY' | tee -a $S
import json, sys
for l in open(sys.argv[1]):
    x = json.loads(l); s = x['shape']
    tr = sorted(x['tried'], key=lambda t: t.get('ms') or 1e9)
    best = tr[0]['ms']
    print('d%d %s %d: best %.1f TF %s' % (s['dim'], 'c' if s['causal'] else '-', s['seq_q'], x['tflops'], x['config']))
    for i, t in enumerate(tr):
        if t['config'].get('persistent') or i < 2:
            print('   %7.4f ms %5.3f  %s' % (t.get('ms') or 0, best / t['ms'] if t.get('ms') else 0, t['config']))
PY
SH='heads=(64|128) seq_q=1 mean_kv=8192|heads=128 seq_q=1 mean_kv=16384'
M='stages=2 threads=256 (ws=true )?splitn=true$|handoff=true$'
for r in A1 B1 A2 B2; do
  bin=./bin/tilego; case $r in A*) bin=./bin/tilego-ab;; esac
  timeout 100 $bin bench --suite mla --shape "$SH" --match "$M" --repeats 30 --out $OUT/c8-$r.jsonl > /dev/null 2>&1; echo "$r exit $?" | tee -a $S
done
python3 bin/summ.py A1 $OUT/c8-A1.jsonl B1 $OUT/c8-B1.jsonl A2 $OUT/c8-A2.jsonl B2 $OUT/c8-B2.jsonl | sort -k1,3 -s | tee -a $S
