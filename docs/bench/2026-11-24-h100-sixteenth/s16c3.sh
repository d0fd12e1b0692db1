#!/usr/bin/env bash
# Sixteenth session, call 3: is d128 non-causal 16k's bench number held down by heat? GPU clocks, temperature and power sampled every 200 ms
# while: the picked config run cold, the bench's config search at the point, the picked config again, cuDNN and FA2.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
nvidia-smi --query-gpu=timestamp,clocks.sm,temperature.gpu,power.draw --format=csv,noheader -lms 200 > $OUT/c3-smi.csv &
SMI=$!
mark() { echo "MARK $(date +%H:%M:%S.%N | cut -c1-12) $*" | tee -a $OUT/c3-marks.txt; }
run16() { ./bin/tilego run flash-attention --dim 128 --seq-q 16384 --batch 1 --heads 16 --layout bshd --repeats 30 --json 2>&1 | python3 -c 'import json,sys; x=json.loads(sys.stdin.read()); print("run16 %.1f TF %s ok=%s" % (x.get("tflops",0), x.get("config"), x.get("ok")))'; }
# compile first (cache), then cool
./bin/tilego run flash-attention --dim 128 --seq-q 16384 --batch 1 --heads 16 --layout bshd --repeats 1 > /dev/null 2>&1
sleep 8; mark cold1; run16 | tee -a $OUT/c3-marks.txt
sleep 8; mark cold2; run16 | tee -a $OUT/c3-marks.txt
mark bench-start
timeout 200 ./bin/tilego bench --suite fa-sweep --shape 'seq_q=16384 .*dim=128 .*causal=false' --out $OUT/c3-bench.jsonl > /tmp/c3-bench.log 2>&1
mark bench-end; run16 | tee -a $OUT/c3-marks.txt
sleep 8; mark cold3; run16 | tee -a $OUT/c3-marks.txt
sleep 8; mark peers-start
timeout 200 python3 scripts/peers.py --suite fa-sweep --impls sdpa-cudnn,sdpa-flash --shape 'seq_q=16384 .*dim=128 .*causal=false' > $OUT/c3-peers.jsonl 2>/tmp/c3-peers.log
mark peers-end
sleep 8; mark cold4; run16 | tee -a $OUT/c3-marks.txt
kill $SMI
python3 - $OUT <<'PY'
import json, sys
o = sys.argv[1]
for f in ("c3-bench.jsonl", "c3-peers.jsonl"):
    for l in open(o + "/" + f):
        x = json.loads(l)
        if "tflops" in x: print(f, x.get("impl"), "%.1f" % x["tflops"], x.get("config", ""))
PY
tail -3 /tmp/c3-bench.log
awk -F', ' '{print $2, $3, $4}' $OUT/c3-smi.csv | sort | uniq -c | sort -rn | head -5
