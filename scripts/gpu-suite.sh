#!/usr/bin/env bash
# The whole GPU suite in one device call. The device machine has no Go, so:
#
#   scripts/gpu-suite.sh build   # here: cross-build the binaries into bin/
#   scripts/gpu-suite.sh run     # there (carry bin/): tests, sanitizers,
#                                # benchmark, peers; prints a table last
#
# Knobs (environment): SUITES (default fa-sweep,extra,gemm), QUICK=1 (fewer
# points), SAN=1 (compute-sanitizer memcheck+racecheck on small shapes),
# TESTS=0 (skip the tests), PEERS=0 (skip torch), SASS=1 (resource report
# and SASS histogram of the default GPU kernels). Logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."

build() {
	export CGO_ENABLED=0 GOOS=linux GOARCH=amd64
	mkdir -p bin
	go build -o bin/tilego ./cmd/tilego &&
		go build -o bin/chart ./chart/cmd &&
		go test -c -tags gpu -o bin/cuda_backend.test ./target/cuda &&
		go test -c -tags gpu -o bin/runtime.test ./runtime/cuda &&
		go test -c -tags gpu -o bin/jit.test ./jit &&
		go test -c -tags gpu -o bin/autotune.test ./autotune &&
		mkdir -p bin/src && cp target/cuda/include/tilego.cuh bin/src/ &&
		for k in "flash-attention --dim 64" "flash-attention --dim 128" "flash-attention --dim 256" \
			"flash-attention --dim 128 --causal" "gemm --m 8192 --n 8192 --k 8192 --out-dtype bf16"; do
			name=$(echo "$k" | tr ' ' '_' | tr -d -)
			go run ./cmd/tilego emit $k --seq-q 4096 --target sm_90a >"bin/src/$name.cu" 2>/dev/null ||
				go run ./cmd/tilego emit $k --target sm_90a >"bin/src/$name.cu"
		done
}

run() {
	OUT=${OUT:-/tmp/tilego-out}
	mkdir -p "$OUT"
	export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=${TILEGO_CACHE:-/tmp/tilego-cache} PYTHONUNBUFFERED=1
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
	summary=()
	if [ "${TESTS:-1}" = 1 ]; then
		for t in runtime jit cuda_backend autotune; do
			./bin/$t.test -test.v -test.timeout 600s >"$OUT/test-$t.log" 2>&1
			rc=$?
			pass=$(grep -c -- '--- PASS' "$OUT/test-$t.log")
			fail=$(grep -c -- '--- FAIL' "$OUT/test-$t.log")
			summary+=("tests $t: $pass passed, $fail failed (exit $rc)")
			grep -- '--- FAIL' "$OUT/test-$t.log" | head -20
		done
	fi
	if [ "${SAN:-0}" = 1 ]; then
		small='^(TestGPUFlashAttention|TestGPUGemm)$/^sm_90a?$/^(mha_cfg0|causal_sq<skv_cfg0|77x130x40_tafalse_tbtrue_bf16_cfg0)$'
		for tool in memcheck racecheck synccheck; do
			compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run "$small" >"$OUT/san-$tool.log" 2>&1
			summary+=("compute-sanitizer $tool: exit $?, $(grep -c -- '--- PASS' "$OUT/san-$tool.log") tests passed ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san-$tool.log" | sed 's/=* *//'))")
		done
	fi
	if [ "${SASS:-0}" = 1 ]; then
		for f in bin/src/*.cu; do
			n=$(basename "$f" .cu)
			nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -o "/tmp/$n.cubin" "$f" 2>&1 | grep -E 'registers|spill' | sed "s/^/$n: /"
			cuobjdump -sass "/tmp/$n.cubin" >"$OUT/$n.sass" 2>&1
			echo "$n: $(grep -cE 'HGMMA' "$OUT/$n.sass") HGMMA, $(grep -cE ' HMMA' "$OUT/$n.sass") HMMA, $(grep -cE 'LDSM' "$OUT/$n.sass") LDSM, $(grep -cE 'LDGSTS' "$OUT/$n.sass") LDGSTS, $(grep -cE 'LDL|STL' "$OUT/$n.sass") LDL/STL, $(grep -cE 'MUFU.EX2' "$OUT/$n.sass") EX2"
		done
	fi
	suites=${SUITES:-fa-sweep,extra,gemm}
	quick=()
	[ "${QUICK:-0}" = 1 ] && quick=(--quick)
	./bin/tilego bench --suite "$suites" "${quick[@]}" --out "$OUT/tilego.jsonl" 2>"$OUT/bench.log"
	summary+=("bench: exit $? ($(wc -l <"$OUT/tilego.jsonl") points)")
	cat "$OUT/bench.log"
	if [ "${PEERS:-1}" = 1 ] && [ -f scripts/peers.py ]; then
		python3 scripts/peers.py --suite "$suites,peak" "${quick[@]}" >"$OUT/peers.jsonl" 2>"$OUT/peers.log"
		summary+=("peers: exit $?")
		python3 scripts/table.py "$OUT/tilego.jsonl" "$OUT/peers.jsonl" | tee "$OUT/table.txt"
		python3 scripts/table.py --md "$OUT/tilego.jsonl" "$OUT/peers.jsonl" >"$OUT/table.md"
		./bin/chart "$OUT/tilego.jsonl" "$OUT/peers.jsonl" -o "$OUT/fa-sweep.svg" || true
	fi
	printf '%s\n' "${summary[@]}"
}

case "${1:-}" in
build) build ;;
run) run ;;
*)
	echo "usage: $0 build|run" >&2
	exit 2
	;;
esac
