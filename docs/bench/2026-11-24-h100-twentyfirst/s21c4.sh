#!/usr/bin/env bash
# Twenty-first session, call 4: what the partial last wave costs at 16k non-causal (d128: 68 of 132 SMs busy in the last of 16 waves; d256: 100 of 8), and the tail split with pieces over more than one round (--splits 3/5/9, the single program's config).
# Per-tile time of H16 (2048 tiles, 15.5 waves) against H33 (4224 tiles, exactly 32 waves), alternated.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c4-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
r() { local tag=$1; shift; ./bin/tilego run flash-attention --batch 1 --seq-q 16384 --layout bshd --repeats 30 --json "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json,sys
r=json.load(open('/tmp/r.json')); s=r['shape']
tiles=s['batch']*s['heads']*(s['seq_q']//128)
print('%-14s %-40s ms %.4f TF %.1f ms/wave %.4f ok %s splits %s %s' % ('$tag', ' '.join(sys.argv[1:])[:40], r['time_ms'], r['tflops'], r['time_ms']/tiles*132, r['ok'], s.get('splits'), r.get('split_note','')[:90]))
" "$@" 2>&1 | tee -a $S || (echo "$tag failed: $(tail -3 /tmp/r.err)" | tee -a $S); }
C128="m=128 n=176 stages=2 threads=256 ws pingpong overlap"
C256="m=128 n=80 stages=2 threads=256 ws overlap"
for i in 1 2; do
  r d128-h16 --heads 16 --dim 128 --config "$C128"
  r d128-h33 --heads 33 --dim 128 --config "$C128"
  r d256-h8 --heads 8 --dim 256 --config "$C256"
  r d256-h33 --heads 33 --dim 256 --config "$C256"
done
for n in 3 5 9 0; do
  r d128-h16-s$n --heads 16 --dim 128 --config "$C128" --splits $n --sms 132
  r d256-h8-s$n --heads 8 --dim 256 --config "$C256" --splits $n --sms 132
done
r d128-h16 --heads 16 --dim 128 --config "$C128"
r d256-h8 --heads 8 --dim 256 --config "$C256"
