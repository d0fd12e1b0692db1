#!/usr/bin/env bash
# Twenty-eighth session, call 12: the combine on partials that are in L2: the chain with a split kernel that
# returns at once (the partials as the last launch's combine read them), with the combine as emitted and with
# a combine that returns at once (TILEGO_SOURCE; outputs wrong on purpose); b64 kv8k, three rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c12-summary.txt
for i in 1 2 3; do
for v in "split-empty combine" "split-empty combine-empty" "split combine-empty" "split combine"; do
  src=""
  case "$v" in *split-empty*) src="mla_decode=bin/split-empty.cu" ;; esac
  case "$v" in *combine-empty*) src="${src:+$src,}mla_combine=bin/comb-empty.cu" ;; esac
  TILEGO_SOURCE=$src timeout 60 ./bin/tilego run mla-decode --batch 64 --mean-kv 8192 --heads 128 --splits 0 --repeats 30 --json --check=false > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-28s ms %.4f' % ('$v', r['time_ms']))" 2>&1 | tee -a $S || echo "$v failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done
