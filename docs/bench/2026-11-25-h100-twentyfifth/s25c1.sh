#!/usr/bin/env bash
# Twenty-fifth session, call 1: racecheck on the drawn walks' ticket read by lane 0 (k1-k6 and the FlashAttention small set); the flush probe; MLA's memory-bound points timed with the L2 flush and on rotated inputs, with the copy both ways.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
nvcc -arch=sm_90a -o /tmp/rc scripts/racecheck_named_barrier.cu && for k in 1 2 3 4 5 6; do
  echo "k$k: $(compute-sanitizer --tool racecheck /tmp/rc $k 2>&1 | tee $OUT/c1-rc-k$k.log | grep -m1 'RACECHECK SUMMARY' | sed 's/=* *//')" | tee -a $S; done
small='^(TestGPUFlashAttention|TestGPUGemm|TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$/^(sm_90a?|wstrue|pingpong|gemm_ws|short_kv)$/^(mha_cfg0|mha_cfg4|mha_cfg5|causal_sq<skv_cfg0|77x130x40_tafalse_tbtrue_bf16_cfg0|200x136x96_tafalse_tbfalse_bf16|san_d64|tail_causal_d128|small_d128|ws_ov)$/^(ws_ovpp|ws_pf|noprod|ws_direct|ws_ovpp_direct|ws_ovpp_draw|ws_ovpp_direct_draw)$'
timeout 300 compute-sanitizer --tool racecheck --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run "$small" > /tmp/rc-fa.log 2>&1
echo "racecheck FA: exit $?, $(grep -c -- '--- PASS' /tmp/rc-fa.log) passed, $(grep -c -- '--- FAIL' /tmp/rc-fa.log) failed; $(grep -m1 'RACECHECK SUMMARY' /tmp/rc-fa.log)" | tee -a $S
grep -E "Read Thread|Write Thread|WAR|RAW|WAW" /tmp/rc-fa.log | sort | uniq -c | head -20 | tee -a $S
gzip -c /tmp/rc-fa.log > $OUT/c1-rc-fa.log.gz
timeout 120 python3 docs/bench/2026-11-25-h100-twentyfifth/flushprobe.py 2>&1 | tee -a $S
python3 scripts/peers.py --suite peak > $OUT/c1-peak.jsonl 2>/tmp/p.err; echo "peak: exit $?" | tee -a $S; grep -E "copy|cublas" /tmp/p.err | tee -a $S
M='ws=true splitn=true roles=true'; SH='heads=(16|32|64) '
for f in l2 rotate l2 rotate; do
  timeout 200 ./bin/tilego bench --suite mla --match "$M" --shape "$SH" --flush $f --out /tmp/m.jsonl 2>/tmp/m.err; echo "mla memory-bound --flush $f: exit $?" | tee -a $S
  cat /tmp/m.jsonl >> $OUT/c1-mla-$f.jsonl
  python3 -c "
import json
for l in open('/tmp/m.jsonl'):
    r=json.loads(l); s=r['shape']
    print('%-12s %-5s b%d h%d %.4f ms %5.0f GB/s' % (r['impl'], r.get('flush'), s['batch'], s['heads'], r['ms'], r['gbps']))
" | tee -a $S
done
python3 scripts/peers.py --suite peak >> $OUT/c1-peak.jsonl 2>/tmp/p.err; echo "peak again: exit $?" | tee -a $S; grep -E "copy|cublas" /tmp/p.err | tee -a $S
