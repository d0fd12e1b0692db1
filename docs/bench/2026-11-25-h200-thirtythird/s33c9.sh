#!/usr/bin/env bash
# Thirty-third session, call 9: TILEGO_STAMPS (target/cuda/stamps.go) checked by its GPU test, then a timeline
# of MLA's split kernel (stamps-edit.py: globaltimer stores, no printf) at b64 and b128 kv8k, summarized by
# stamps-read.py: where a piece's time goes besides its pages.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
timeout 60 ./bin/cuda_backend.test -test.run 'TestGPUStamps' -test.v 2>&1 | tail -3
for b in 64 128; do
  R="--batch $b --heads 128 --mean-kv 8192 --splits 0 --repeats 10 --json"
  ./bin/tilego run mla-decode $R > /tmp/base.json 2>/dev/null
  TILEGO_SOURCE=mla_decode=bin/stamped.cu (scripts/mla_stamps_edit.py of the generated split kernel) TILEGO_STAMPS=$OUT/b$b ./bin/tilego run mla-decode $R > $OUT/b$b-stamped.json 2>/tmp/err.txt
  python3 -c "import json; a=json.load(open('/tmp/base.json')); s=json.load(open('$OUT/b$b-stamped.json')); print('b$b: base %.4f ms, stamped %.4f ms, ok %s' % (a['time_ms'], s['time_ms'], s.get('ok')))" || tail -3 /tmp/err.txt
  python3 scripts/mla_stamps_read.py $OUT/b$b.mla_decode.txt | tee $OUT/b$b-summary.txt
done
