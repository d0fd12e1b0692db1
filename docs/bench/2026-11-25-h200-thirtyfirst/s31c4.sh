#!/usr/bin/env bash
# Thirty-first session, call 4 (H200), the tree as it will land: the backward's new default (128 keys over two
# warpgroups up to d128) against SDPA's backward, its resource report; then the mla suite at the bench's picks
# with copy/cuBLAS before and after and the plain-PyTorch MLA.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c4-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.limit --format=csv,noheader | tee -a $S
for f in bin/src/bwd_*n128*.cu; do n=$(basename $f .cu)
  nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -o /tmp/$n.cubin $f 2>&1 | grep -E 'registers|spill' | sed "s/^/$n: /" | tee -a $S
done
for pt in "--seq-q 2048 --dim 128" "--seq-q 2048 --dim 128 --causal" "--seq-q 2048 --dim 64"; do
  timeout 60 ./bin/tilego run flash-attention-bwd --batch 1 --heads 16 $pt --layout bshd --repeats 20 --json > /tmp/b.json 2>/tmp/b.err
  python3 -c "import json; r=json.load(open('/tmp/b.json')); print('bwd b1h16 %-32s ms %.4f tf %.1f ok %s cfg %s' % ('$pt', r['time_ms'], r['tflops'], r.get('ok'), r['config']))" > /tmp/b.txt 2>&1 || echo "bwd $pt failed: $(tail -2 /tmp/b.err)" > /tmp/b.txt; tee -a $S < /tmp/b.txt
  timeout 60 python3 scripts/bwd_peers.py --batch 1 --heads 16 $(echo $pt | sed 's/--seq-q/--seq/') 2>&1 | tail -2 | tee -a $S
done
echo "bwd done at $(( $(date +%s) - T0 )) s" | tee -a $S
python3 scripts/peers.py --suite peak > $OUT/c4-peak.jsonl 2>/tmp/p.err; echo "peak: exit $?" | tee -a $S
timeout 330 ./bin/tilego bench --suite mla --match 'ws=true splitn=true roles=true' --out $OUT/c4-mla.jsonl 2>/tmp/bench.err; echo "mla: exit $? ($(wc -l < $OUT/c4-mla.jsonl) records) at $(( $(date +%s) - T0 )) s" | tee -a $S
python3 scripts/peers.py --suite peak >> $OUT/c4-peak.jsonl 2>/tmp/p.err; echo "peak again: exit $?" | tee -a $S
timeout $(( 585 - $(date +%s) + T0 )) python3 scripts/peers.py --suite mla > $OUT/c4-torch.jsonl 2>/tmp/t.err; echo "torch mla: exit $?" | tee -a $S
python3 scripts/table.py $OUT/c4-mla.jsonl $OUT/c4-peak.jsonl $OUT/c4-torch.jsonl 2>&1 | tee -a $S
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
