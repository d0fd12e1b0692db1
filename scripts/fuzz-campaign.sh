#!/usr/bin/env bash
# A tilego fuzz campaign on a GPU machine (carry bin/tilego): batches of
# BATCH programs from seed FIRST on, one process a batch (a fault that
# loses a process's CUDA context ends only its batch: the batch goes on
# in a new process from the seed after the fault), until SECONDS_BUDGET
# have passed or N programs ran. Each finding's reproducer (shrunk where
# the context survives) lands under $OUT/campaign; the totals print last,
# and the reproducers are packed into $OUT/campaign.tgz.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/tilego-out}
FIRST=${FIRST:-100000} BATCH=${BATCH:-500} N=${N:-10000} SECONDS_BUDGET=${SECONDS_BUDGET:-480}
dir=$OUT/campaign
mkdir -p "$dir"
start=$(date +%s)
seed=$FIRST
ran=0 faults=0
while [ $ran -lt "$N" ] && [ $(($(date +%s) - start)) -lt "$SECONDS_BUDGET" ]; do
	n=$((BATCH < N - ran ? BATCH : N - ran))
	./bin/tilego fuzz --backend gpu --target both --n $n --seed $seed --shrink 40 --shrink-per-kind 1 --json --out "$dir" >"$dir/batch-$seed.json" 2>"$dir/batch-$seed.err"
	done_n=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(s['programs'])" "$dir/batch-$seed.json" 2>/dev/null || echo $n)
	if grep -q "context is lost" "$dir/batch-$seed.err"; then
		faults=$((faults + 1))
	fi
	[ "$done_n" -gt 0 ] || done_n=1
	ran=$((ran + done_n))
	seed=$((seed + done_n))
done
python3 - "$dir" <<'PY'
import glob, json, sys, collections
tot = collections.Counter(); kinds = collections.Counter(); reports = []
for f in sorted(glob.glob(sys.argv[1] + "/batch-*.json")):
    try:
        s = json.load(open(f))
    except Exception:
        continue
    for k in ("programs", "passed", "rejected_by_verifier", "refused_by_a_target"):
        tot[k] += s.get(k, 0)
    kinds.update(s.get("findings_by_kind") or {})
    reports += s.get("reports") or []
print("campaign:", dict(tot), "findings:", dict(kinds))
for r in reports:
    print("  ", r["summary"][:200], "->", r.get("reproducer", ""))
PY
echo "campaign: $ran programs from seed $FIRST in $(($(date +%s) - start)) s, $faults batches lost their context"
tar czf "$OUT/campaign.tgz" -C "$dir" . 2>/dev/null
