#!/usr/bin/env bash
# Compares the CUDA this tree generates with what git revision REV (default
# HEAD) generates, for the library kernels' default configs at the bench
# suites' shapes and a few schedule variants, on both targets; prints each
# difference and exits 1 if there is one. No GPU needed. For refactors that
# must not change generated code:
#
#   scripts/emit-compare.sh origin/main
set -uo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/new" ./cmd/tilego || exit 2
git archive "$rev" | tar -x -C "$tmp" --one-top-level=src && (cd "$tmp/src" && go build -o "$tmp/old" ./cmd/tilego) || exit 2
cases=(
	"flash-attention" "flash-attention --dim 128" "flash-attention --dim 256"
	"flash-attention --dim 64 --seq-q 512 --causal" "flash-attention --dim 128 --seq-q 512"
	"flash-attention --dim 128 --seq-q 512 --causal" "flash-attention --dim 128 --seq-q 1024"
	"flash-attention --dim 128 --seq-q 2048 --causal" "flash-attention --dim 128 --seq-q 4096"
	"flash-attention --dim 128 --seq-q 16384 --batch 2" "flash-attention --dim 256 --seq-q 512 --causal"
	"flash-attention --dim 256 --seq-q 1024" "flash-attention --dim 256 --seq-q 8192"
	"flash-attention --dim 128 --heads 8 --seq-q 512 --seq-kv 8192 --splits 0 --step 1"
	"flash-attention --dim 128 --heads 8 --seq-q 512 --seq-kv 8192 --splits 0 --step 2"
	"flash-attention-bwd --dim 64 --step 1" "flash-attention-bwd --dim 128 --step 2" "flash-attention-bwd --dim 128 --causal --step 2"
	"flash-attention-bwd --dim 128 --step 3"
	"gemm" "gemm --m 4096 --n 4096 --k 4096 --trans-b" "gemm --m 8192 --n 8192 --k 8192 --out-dtype bf16" "gemm --trans-a"
	"mla-decode" "mla-decode --heads 128" "mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0 --step 1"
	"mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0 --step 2"
	"mla-decode --batch 128 --heads 128 --mean-kv 8192 --splits 0 --step 1"
	"mla-decode --batch 64 --heads 16 --mean-kv 8192 --splits 0 --step 1"
	"mla-decode --batch 64 --heads 128 --seq-q 2 --mean-kv 4096 --splits 0 --step 1"
)
configs=("" "ws overlap" "ws overlap pingpong" "ws pingpong persistent" "ws overlap persistent direct")
diffs=0 n=0
check() { # target, then the emit arguments
	local t=$1
	shift
	a=$("$tmp/old" emit "$@" --target "$t" 2>&1 | md5sum)
	b=$("$tmp/new" emit "$@" --target "$t" 2>&1 | md5sum)
	n=$((n + 1))
	if [ "$a" != "$b" ]; then
		echo "differs: --target $t $*"
		diffs=$((diffs + 1))
	fi
}
for t in sm_80 sm_90a; do
	for c in "${cases[@]}"; do
		# shellcheck disable=SC2086
		check "$t" $c
	done
done
for cfg in "${configs[@]:1}"; do
	for d in 64 128 256; do
		check sm_90a flash-attention --dim "$d" --seq-q 1024 --config "$cfg"
	done
done
for cfg in "handoff=true" "handoff=false" "handoff=false roles=false" "merge=true early=false" "early=true"; do
	check sm_90a mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0 --step 1 --config "$cfg"
done
echo "emit-compare against $rev: $n programs, $diffs differ"
[ $diffs = 0 ]
