#!/usr/bin/env bash
# Twenty-fourth session, call 13: racecheck's reports on the small FlashAttention/GEMM set (gpu-suite.sh SAN=1's), with the test names, and on the causal drawn walks alone.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
small='^(TestGPUFlashAttention|TestGPUGemm|TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$/^(sm_90a?|wstrue|pingpong|gemm_ws|short_kv)$/^(mha_cfg0|mha_cfg4|mha_cfg5|causal_sq<skv_cfg0|77x130x40_tafalse_tbtrue_bf16_cfg0|200x136x96_tafalse_tbfalse_bf16|san_d64|tail_causal_d128|small_d128|ws_ov)$/^(ws_ovpp|ws_pf|noprod|ws_direct|ws_ovpp_direct|ws_ovpp_draw|ws_ovpp_direct_draw)$'
compute-sanitizer --tool racecheck --racecheck-report all ./bin/cuda_backend.test -test.v -test.run "$small" > $OUT/c13-racecheck.log 2>&1
echo "racecheck exit $?"
python3 - $OUT/c13-racecheck.log <<'PY'
import sys, re, collections
cur = None; per = collections.Counter(); first = {}
for line in open(sys.argv[1], errors='replace'):
    m = re.match(r'=== RUN\s+(\S+)', line)
    if m: cur = m.group(1); continue
    if 'hazard' in line.lower() or 'Race reported' in line or 'Error:' in line:
        per[cur] += 1
        first.setdefault(cur, []).append(line.strip()[:200])
for k, v in per.items():
    print(v, k)
    for l in first[k][:6]: print('   ', l)
PY
grep -E 'SUMMARY' $OUT/c13-racecheck.log
