#!/usr/bin/env bash
# Thirty-sixth session, call 11 (the final tree: Merge the default where requests outnumber parts): the mla suite
# with its peers, each point's timed launches in order (times_ms).
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 250 > $OUT/smi.csv 2>&1 &
SMI=$!
SUITES=mla TESTS=0 timeout 560 bash scripts/gpu-suite.sh run > /tmp/suite.log 2>&1; echo "suite exit $?"
kill $SMI
tail -26 /tmp/suite.log
python3 - $OUT/tilego.jsonl <<'PY' | tee $OUT/launches.txt
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    t = r.get("times_ms") or []
    if t:
        s = sorted(t)
        print(f"{r.get('impl','?'):8s} {json.dumps(r.get('shape'))[:70]:70s} med {s[len(s)//2]:.4f} min {s[0]:.4f} first5 {sum(t[:5])/5:.4f} last5 {sum(t[-5:])/5:.4f}")
PY
echo "elapsed $(( $(date +%s) - T0 )) s"
