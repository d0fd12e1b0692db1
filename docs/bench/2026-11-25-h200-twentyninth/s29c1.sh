#!/usr/bin/env bash
# Twenty-ninth session, call 1 (tree f421269, on an H200): the mla suite at the bench's picks (rotated
# inputs), copy and cuBLAS before and after, the plain-PyTorch MLA; then issue 4's weak points with peers.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c1-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.limit --format=csv,noheader | tee -a $S
python3 scripts/peers.py --suite peak > $OUT/c1-peak.jsonl 2>/tmp/p.err; echo "peak: exit $?" | tee -a $S; grep -E "copy|cublas" /tmp/p.err | tee -a $S
timeout 330 ./bin/tilego bench --suite mla --match 'ws=true splitn=true roles=true' --out $OUT/c1-mla.jsonl 2>/tmp/bench.err; echo "mla: exit $? ($(wc -l < $OUT/c1-mla.jsonl) records) at $(( $(date +%s) - T0 )) s" | tee -a $S
python3 scripts/peers.py --suite peak >> $OUT/c1-peak.jsonl 2>/tmp/p.err; echo "peak again: exit $?" | tee -a $S; grep -E "copy|cublas" /tmp/p.err | tee -a $S
timeout 120 python3 scripts/peers.py --suite mla > $OUT/c1-torch.jsonl 2>/tmp/t.err; echo "torch mla: exit $?" | tee -a $S
python3 scripts/table.py $OUT/c1-mla.jsonl $OUT/c1-peak.jsonl $OUT/c1-torch.jsonl 2>&1 | tee -a $S
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
if [ $(( $(date +%s) - T0 )) -lt 380 ]; then
OUT=/tmp/sw TESTS=0 SUITES=fa-sweep SHAPE='seq_q=1024 seq_kv=1024 dim=64 dim_v=64 causal=true|seq_q=512 seq_kv=512 dim=256 dim_v=256 causal=true|seq_q=16384 seq_kv=16384 dim=128 dim_v=128 causal=false' timeout $(( 570 - $(date +%s) + T0 )) bash scripts/gpu-suite.sh run > /tmp/sw-run.log 2>&1
echo "sweep run: exit $?" | tee -a $S
for f in tilego.jsonl peers.jsonl table.txt summary.txt; do cp /tmp/sw/$f $OUT/c1-fa-$f; done
tail -8 /tmp/sw/table.txt | tee -a $S
fi
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
