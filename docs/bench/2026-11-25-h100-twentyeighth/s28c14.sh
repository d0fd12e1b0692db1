#!/usr/bin/env bash
# Twenty-eighth session, call 14: what a ticket at the end of every piece costs (bin/ticket.py, a hand edit
# through TILEGO_SOURCE; results unchanged), against the kernel as emitted, three rounds; round 1 checked.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c14-summary.txt
for i in 1 2 3; do
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192" "--batch 128 --mean-kv 4096 --seq-q 2"; do
for v in base ticket; do
  f=t1; case "$pt" in *seq-q*) f=t2 ;; esac
  TILEGO_SOURCE=mla_decode=bin/$f-$v.cu timeout 60 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-40s %-7s ms %.4f ok %s' % ('$pt', '$v', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "$v failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
