#!/usr/bin/env bash
# The whole GPU suite in one device call. The device machine has no Go, so:
#
#   scripts/gpu-suite.sh build   # here: cross-build the binaries into bin/
#   scripts/gpu-suite.sh run     # there (carry bin/): tests, sanitizers,
#                                # benchmark, peers; prints a table last
#
# (scripts/gpu-tests.sh runs the tests alone, in parallel groups: about 8
# minutes for all of them, where this script's sequential run takes longer.)
#
# Knobs (environment): FUZZ=N (tilego fuzz: N random programs on both
# code paths against the interpreter; FUZZ_SEED), SANFUZZ=N
# (compute-sanitizer memcheck, racecheck and synccheck over N of them), SUITES (default fa-sweep,extra,gemm), QUICK=1 (fewer
# points), SAN=1 (compute-sanitizer memcheck+racecheck on small shapes),
# TESTS=0 (skip the tests; TEST_PKGS="cuda_backend" runs only those test
# binaries before the TMA/warp-specialization test, GUARDED=0 skips that
# one), PEERS=0 (skip torch), SASS=1 (resource report
# and SASS histogram of the default GPU kernels), TUNE=1 (full searches of
# the FlashAttention configs at the short causal sweep points with a fresh
# tuning cache, then tilego run picking the winner from it), BENCH=0 (skip
# tilego bench), BENCH_FLAGS (more tilego bench flags, e.g. "--sms 132
# --repeats 50"; unless given --flush, tilego bench times each suite as
# scripts/peers.py times its peers: the L2 flushed before every launch, as
# do_bench does, or for mla on rotated copies of the inputs), SHAPE (a regular expression: tilego bench's --shape, and
# the same points for the peers), PEERS_BUDGET_S and PEERS_IMPLS (read by
# scripts/peers.py).
# Logs go to $OUT (records and tables as files, the logs in logs.tgz).
# TILEGO_TMA=0, TILEGO_WS=0/1, TILEGO_PINGPONG=0/1, TILEGO_WGSPLIT=0/1,
# TILEGO_SPLITRING=0, TILEGO_SKIPONES=0 and TILEGO_LATE=0 (read by the tilego command, which
# passes them to the compiler as cuda.Options.Switches; the test binaries ignore them)
# turn TMA loads off, or warp specialization, the consumers' ping-pong, or
# warpgroups splitting a Gemm's N (MLA's 64 rows over two; tl's SplitN)
# off or on, or a deferred loop's separate K and V rings off, or the
# skipped rescales (tl's ScaleRows) off, or a walk's late start (tl's
# LateStart) off, for everything run; TILEGO_PDL=0 launches a chain's steps
# that start early (MLA's combine under Early) after the step before, and
# TILEGO_COOP=0 launches a kernel whose blocks wait for each other (MLA's
# Merge) plainly, not cooperatively (to time what the cooperative launch
# costs; its grid must still fit the GPU at once). TILEGO_SOURCE=name=file.cu compiles
# a hand-edited program in place of the generated one (to time an edit
# before the compiler makes it; several comma-separated); TILEGO_STAMPS=prefix
# writes such a program's tilego_stamps array after a run (README, "emit").
#
# A/B: AB_REV=REV at build also builds bin/tilego-ab from git revision REV;
# AB=1 at run then times the same suites with it right after this tree's
# binary and prints B (this tree) over A (REV) per point (scripts/ab.py),
# both in one device run. NCU="tilego run arguments" (e.g. "mla-decode
# --batch 128 --heads 128 --mean-kv 8192 --splits 0") profiles that run's
# kernels (NCU_KERNEL regex, default all; NCU_COUNT launches, default 2)
# with ncu's full set and writes ncu-details.txt and, per instruction,
# where the warps wait (ncu-stalls.txt, scripts/ncu_stalls.py).
#
# SUITES may also name fa-short, fa-bwd (the FlashAttention backward,
# SDPA's backward its peers), and issue 6's mla (MLA decoding) and
# fa-tail (FlashAttention's tail split), which time a split path (impl
# tilego-split) beside the single program and compare MLA's GB/s with the
# copy bandwidth, e.g. SUITES=mla,fa-tail TESTS=0. The tests include the
# bench package's GPU test: a small mla and fa-tail pair through the whole
# benchmark. Rough times on a 16-core H100 host, compiles cached: mla ~3
# min (mostly making and uploading 1e10 KV-cache elements on the host; QUICK
# ~25 s), fa-tail ~1 min, their peers (torch MLA, copy bandwidth) ~1 min.
# On the H200 hosts of 2026-11-29 the mla suite took longer: 27 of its 40
# points in 7 minutes, so give SUITES=mla a call of its own.
set -uo pipefail
cd "$(dirname "$0")/.."

build() {
	export CGO_ENABLED=0 GOOS=linux GOARCH=amd64
	mkdir -p bin
	go build -o bin/tilego ./cmd/tilego &&
		go build -o bin/chart ./chart/cmd &&
		go test -c -tags gpu -o bin/cuda_backend.test ./backend/cuda &&
		go test -c -tags gpu -o bin/runtime.test ./runtime/cuda &&
		go test -c -tags gpu -o bin/jit.test ./jit &&
		go test -c -tags gpu -o bin/autotune.test ./autotune &&
		go test -c -tags gpu -o bin/bench.test ./bench &&
		rm -rf bin/src && mkdir -p bin/src && cp compiler/cudagen/include/tilego.cuh bin/src/ &&
		for k in "flash-attention --dim 64" "flash-attention --dim 128" "flash-attention --dim 256" \
			"flash-attention --dim 128 --causal" "gemm --m 8192 --n 8192 --k 8192 --out-dtype bf16"; do
			name=$(echo "$k" | tr ' ' '_' | tr -d -)
			go run ./cmd/tilego emit $k --seq-q 4096 --target sm_90a >"bin/src/$name.cu" 2>/dev/null ||
				go run ./cmd/tilego emit $k --target sm_90a >"bin/src/$name.cu"
		done &&
		for cfg in "ws overlap" "ws overlap pingpong"; do # the Hopper schedules, d128 4k
			go run ./cmd/tilego emit flash-attention --dim 128 --seq-q 4096 --target sm_90a --config "$cfg" >"bin/src/flashattention_dim_128_$(echo "$cfg" | tr ' ' '_').cu"
		done &&
		for cfg in "handoff=true" "handoff=false" "handoff=false roles=false"; do # MLA h_q 128: the single program and the split kernel, with warpgroup roles (and hand-offs) or not
			name=$(echo "$cfg" | tr ' =' '__')
			go run ./cmd/tilego emit mla-decode --heads 128 --target sm_90a --config "$cfg" >"bin/src/mla_single_$name.cu" &&
				go run ./cmd/tilego emit mla-decode --heads 128 --splits 2 --step 1 --target sm_90a --config "$cfg" >"bin/src/mla_split_$name.cu"
		done &&
		for cfg in "n=64 ws persistent prefetch" "n=64 ws"; do # d256 causal 512 (issue 3's last point), persistent or not
			go run ./cmd/tilego emit flash-attention --dim 256 --seq-q 512 --batch 32 --heads 8 --causal --target sm_90a --config "$cfg" >"bin/src/flashattention_dim_256_causal_512_$(echo "$cfg" | tr ' =' '__').cu"
		done &&
		if [ -n "${AB_REV:-}" ]; then # the A side of an A/B: REV's CLI, built from a clean export
			src=$(mktemp -d) && git archive "$AB_REV" | tar -x -C "$src" &&
				(cd "$src" && go build -o "$OLDPWD/bin/tilego-ab" ./cmd/tilego) && rm -rf "$src" &&
				echo "bin/tilego-ab: $(git rev-parse --short "$AB_REV")" >bin/tilego-ab.rev
		else
			rm -f bin/tilego-ab bin/tilego-ab.rev
		fi
}

run() {
	OUT=${OUT:-/tmp/tilego-out}
	mkdir -p "$OUT"
	# A kernel that has not finished after TILEGO_HANG_S seconds is given up
	# as hung: the test or bench config fails with its name, and every later
	# GPU call of that process fails at once, instead of the whole call
	# sitting out its time limit. Compiled kernels are cached where tilego
	# puts them by default, the user's cache folder (XDG_CACHE_HOME or
	# ~/.cache, /tilego), unless TILEGO_CACHE says otherwise: never a
	# shared folder such as /tmp, where another user could plant code that
	# tilego would load (tilego refuses one that others can write).
	export TILEGO_REQUIRE_GPU=1 PYTHONUNBUFFERED=1 TILEGO_HANG_S=${TILEGO_HANG_S:-60}
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
	summary=()
	if [ "${TESTS:-1}" = 1 ]; then
		for t in ${TEST_PKGS-runtime jit cuda_backend autotune bench}; do
			# The TMA/warp-specialized variants run apart, with a short
			# timeout: a wrong barrier phase hangs rather than fails.
			./bin/$t.test -test.v -test.timeout 600s -test.skip '^(TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$' >"$OUT/test-$t.log" 2>&1
			rc=$?
			pass=$(grep -c -- '--- PASS' "$OUT/test-$t.log")
			fail=$(grep -c -- '--- FAIL' "$OUT/test-$t.log")
			summary+=("tests $t: $pass passed, $fail failed (exit $rc)")
			grep -- '--- FAIL' "$OUT/test-$t.log" | head -20
		done
		if [ "${GUARDED:-1}" = 1 ]; then
			timeout 420 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$' >"$OUT/test-tma.log" 2>&1
			rc=$?
			summary+=("tests tma/ws/deferred/persistent: $(grep -c -- '--- PASS' "$OUT/test-tma.log") passed, $(grep -c -- '--- FAIL' "$OUT/test-tma.log") failed (exit $rc; 124 = hung)")
		fi
		# A kernel that spins forever must come back as a named error: alone,
		# since it leaves its process's device unusable.
		TILEGO_TEST_HANG=1 timeout 60 ./bin/runtime.test -test.v -test.run '^TestGPUHangIsReported$' >"$OUT/test-hang.log" 2>&1
		summary+=("test hang watchdog: exit $? ($(grep -cE -- '--- PASS' "$OUT/test-hang.log") passed)")
		./bin/tilego run mla-decode --batch 8 --heads 128 --mean-kv 2000 --splits 0 >"$OUT/run-split.log" 2>&1
		summary+=("tilego run mla-decode --splits 0 (split kernel, then combine): exit $?")
	fi
	if [ "${SAN:-0}" = 1 ]; then
		# FlashAttention and GEMM on both paths (sm_90a: TMA), with a
		# producer warpgroup, and on a persistent grid (the fourth level;
		# tail_causal_d128's causal walk packs its last round; small_d128's
		# walk, with the _draw configs, draws its tiles from a counter).
		small='^(TestGPUFlashAttention|TestGPUGemm|TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$/^(sm_90a?|wstrue|pingpong|gemm_ws|short_kv)$/^(mha_cfg0|mha_cfg4|mha_cfg5|causal_sq<skv_cfg0|77x130x40_tafalse_tbtrue_bf16_cfg0|200x136x96_tafalse_tbfalse_bf16|san_d64|tail_causal_d128|small_d128|ws_ov)$/^(ws_ovpp|ws_pf|noprod|ws_direct|ws_ovpp_direct|ws_ovpp_draw|ws_ovpp_direct_draw)$'
		# MLA: the single program on mma.sync, and the split path (the
		# scheduler's parts, the combine) with the wgmma/TMA/producer block.
		# With hand-offs (an mbarrier one way, a meeting at a named barrier
		# back; single, split, parts of several pieces), pages loaded
		# evict-first (one block a request: h_q 16-32 padded), two tokens
		# a block with hand-offs, a request's first piece merging the
		# others (Merge: blocks waiting for each other's counts).
		mla='^TestGPUMLADecode$/^sm_90a/(sq1_m16|split_sched_hq128_splitn_ws|split_sched_hq128_handoff|split_3parts_hq128_handoff|hq128_handoff_long|split_sched_hq32_padded_splitn_ws|split_uniform3_sq2_f16_handoff|split_sched_hq64_handoff_merge|split_3parts_hq128_handoff_merge)$'
		# The FlashAttention backward: dQ added atomically, GQA heads sharing a block.
		bwd='^TestGPUAttnBwd$/^sm_90a$/^(causal|gqa_bshd_n128|causal_sq<skv_dv32)$'
		for tool in memcheck racecheck synccheck; do
			compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run "$bwd" >"$OUT/san-bwd-$tool.log" 2>&1
			summary+=("compute-sanitizer $tool, backward: exit $?, $(grep -c -- '--- PASS' "$OUT/san-bwd-$tool.log") tests passed ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san-bwd-$tool.log" | sed 's/=* *//'))")
			compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run "$small" >"$OUT/san-$tool.log" 2>&1
			summary+=("compute-sanitizer $tool: exit $?, $(grep -c -- '--- PASS' "$OUT/san-$tool.log") tests passed ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san-$tool.log" | sed 's/=* *//'))")
			compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run "$mla" >"$OUT/san-mla-$tool.log" 2>&1
			summary+=("compute-sanitizer $tool, MLA: exit $?, $(grep -c -- '--- PASS' "$OUT/san-mla-$tool.log") tests passed ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san-mla-$tool.log" | sed 's/=* *//'))")
		done
		# racecheck's model of a named barrier that part of the block meets
		# (a warpgroup block's own) and of mbarriers (a drawn walk's
		# ticket), and MLA's hand-offs: 22 race-free kernels.
		nvcc -arch=sm_90a -o /tmp/racecheck_named_barrier scripts/racecheck_named_barrier.cu &&
			for k in $(seq 1 22); do
				summary+=("racecheck on scripts/racecheck_named_barrier.cu k$k (race-free): $(compute-sanitizer --tool racecheck /tmp/racecheck_named_barrier $k 2>&1 | grep -m1 'RACECHECK SUMMARY' | sed 's/=* *//')")
			done
	fi
	if [ "${SASS:-0}" = 1 ]; then
		for f in bin/src/*.cu; do
			n=$(basename "$f" .cu)
			# C7514: ptxas serialized the kernel's wgmmas (pingpong.go says when)
			nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -o "/tmp/$n.cubin" "$f" 2>&1 | grep -E 'registers|spill|C7514' | sed "s/^/$n: /"
			cuobjdump -sass "/tmp/$n.cubin" >"$OUT/$n.sass" 2>&1
			echo "$n: $(grep -cE 'HGMMA' "$OUT/$n.sass") HGMMA, $(grep -cE ' HMMA' "$OUT/$n.sass") HMMA, $(grep -cE 'LDSM' "$OUT/$n.sass") LDSM, $(grep -cE 'LDGSTS' "$OUT/$n.sass") LDGSTS, $(grep -cE 'LDL|STL' "$OUT/$n.sass") LDL/STL, $(grep -cE 'MUFU.EX2' "$OUT/$n.sass") EX2"
		done
	fi
	if [ "${TUNE:-0}" = 1 ]; then
		tune_cache=$(mktemp -d)
		for shape in "--batch 32 --heads 32 --dim 64" "--batch 32 --heads 16 --dim 128" "--batch 32 --heads 8 --dim 256"; do
			args=(flash-attention $shape --seq-q 512 --causal --layout bshd)
			t0=$(date +%s.%N)
			TILEGO_CACHE=$tune_cache ./bin/tilego tune "${args[@]}" --budget 0 --patience 0 --max 0 >>"$OUT/tune.log" 2>&1
			rc=$?
			t1=$(date +%s.%N)
			TILEGO_CACHE=$tune_cache ./bin/tilego run "${args[@]}" >>"$OUT/tune.log" 2>&1
			summary+=("tune ${args[*]}: exit $rc in $(awk "BEGIN{printf \"%.1f\", $t1-$t0}") s; $(grep -oE '[0-9]+ candidates: [^;]*skipped' "$OUT/tune.log" | tail -1); $(grep -oE 'default .*x\)' "$OUT/tune.log" | tail -1); run: $(grep -oE 'tuned \(cache\).*picked in [0-9.]+ ms' "$OUT/tune.log" | tail -1 | sed 's/.*picked/picked/')")
		done
		grep -E 'candidates|default|picked|stopped|^  [0-9] ' "$OUT/tune.log"
	fi
	if [ "${FUZZ:-0}" -gt 0 ]; then
		# Random valid programs on both code paths against the interpreter
		# (tilego fuzz): FUZZ programs from seed FUZZ_SEED (default: the
		# date), each run on sm_80's path and sm_90a's; findings shrunk into
		# Go reproducers under $OUT/fuzz.
		seed=${FUZZ_SEED:-$(date +%s)}
		t0=$(date +%s)
		./bin/tilego fuzz --backend gpu --target both --n "$FUZZ" --seed "$seed" --out "$OUT/fuzz" >"$OUT/fuzz.log" 2>&1
		rc=$?
		summary+=("tilego fuzz --n $FUZZ --seed $seed (both targets): exit $rc in $(($(date +%s) - t0)) s; $(grep -m1 -E '^[0-9]+ programs in' "$OUT/fuzz.log")")
		grep -A12 -E '^[0-9]+ programs in' "$OUT/fuzz.log" | head -30
	fi
	if [ "${SANFUZZ:-0}" -gt 0 ]; then
		# compute-sanitizer over SANFUZZ fuzzed programs, both targets.
		for tool in memcheck racecheck synccheck; do
			compute-sanitizer --tool $tool --error-exitcode 9 ./bin/tilego fuzz --backend gpu --target both --n "$SANFUZZ" --seed "${SANFUZZ_SEED:-77}" --shrink 0 --out "$OUT/sanfuzz" >"$OUT/sanfuzz-$tool.log" 2>&1
			summary+=("compute-sanitizer $tool over $SANFUZZ fuzzed programs: exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanfuzz-$tool.log" | sed 's/=* *//'); $(grep -m1 -E '^[0-9]+ programs in' "$OUT/sanfuzz-$tool.log"))")
		done
	fi
	suites=${SUITES:-fa-sweep,extra,gemm}
	quick=()
	[ "${QUICK:-0}" = 1 ] && quick=(--quick)
	shape=()
	[ -n "${SHAPE:-}" ] && shape=(--shape "$SHAPE")
	peers=0
	[ "${PEERS:-1}" = 1 ] && [ -f scripts/peers.py ] && peers=1
	if [ $peers = 1 ]; then # first, so that tilego bench can draw them in its chart
		python3 scripts/peers.py --suite "$suites,peak" "${quick[@]}" "${shape[@]}" >"$OUT/peers.jsonl" 2>"$OUT/peers.log"
		summary+=("peers: exit $?")
	fi
	if [ "${BENCH:-1}" = 1 ]; then
		chart=()
		case ",$suites," in *,fa-sweep,* | *,extra,* | *,gemm,*)
			chart=(--chart "$OUT/chart.svg")
			[ $peers = 1 ] && chart+=(--peers "$OUT/peers.jsonl") ;;
		esac
		# shellcheck disable=SC2086 # BENCH_FLAGS is a list of flags
		./bin/tilego bench --suite "$suites" "${quick[@]}" "${shape[@]}" ${BENCH_FLAGS:-} "${chart[@]}" --out "$OUT/tilego.jsonl" 2>"$OUT/bench.log"
		summary+=("bench: exit $? ($(wc -l <"$OUT/tilego.jsonl") points)")
		cat "$OUT/bench.log"
	fi
	if [ "${AB:-0}" = 1 ] && [ -x bin/tilego-ab ]; then
		# shellcheck disable=SC2086 # BENCH_FLAGS is a list of flags
		./bin/tilego-ab bench --suite "$suites" "${quick[@]}" "${shape[@]}" ${BENCH_FLAGS:-} --out "$OUT/tilego-ab.jsonl" 2>"$OUT/bench-ab.log"
		summary+=("bench A ($(cat bin/tilego-ab.rev)): exit $?")
		python3 scripts/ab.py "$OUT/tilego-ab.jsonl" "$OUT/tilego.jsonl" | tee "$OUT/ab.txt"
	fi
	if [ -n "${NCU:-}" ]; then
		# shellcheck disable=SC2086 # NCU is a list of tilego run arguments
		timeout 300 ncu -k "regex:${NCU_KERNEL:-.}" -c "${NCU_COUNT:-2}" --set full -o "$OUT/prof" -f ./bin/tilego run $NCU --repeats 1 >"$OUT/ncu-run.log" 2>&1
		summary+=("ncu ($NCU): exit $?")
		ncu -i "$OUT/prof.ncu-rep" --page details >"$OUT/ncu-details.txt" 2>&1
		ncu -i "$OUT/prof.ncu-rep" --page source --csv --print-source sass >"$OUT/sass.csv" 2>&1
		python3 scripts/ncu_stalls.py "$OUT/sass.csv" >"$OUT/ncu-stalls.txt" 2>&1
		head -16 "$OUT/ncu-stalls.txt"
		rm -f "$OUT/prof.ncu-rep" "$OUT/sass.csv"
	fi
	if [ $peers = 1 ]; then
		python3 scripts/table.py "$OUT/tilego.jsonl" "$OUT/peers.jsonl" | tee "$OUT/table.txt"
		python3 scripts/table.py --md "$OUT/tilego.jsonl" "$OUT/peers.jsonl" >"$OUT/table.md"
	fi
	printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
	# The device tool brings back at most 8 files: the records and tables
	# as they are, every log in one archive.
	list=$(mktemp)
	(cd "$OUT" && find . -maxdepth 1 -type f ! -name '*.jsonl' ! -name 'table.*' ! -name chart.svg ! -name summary.txt ! -name logs.tgz -print0 >"$list" &&
		tar czf logs.tgz --null -T "$list" --remove-files)
}

case "${1:-}" in
build) build ;;
run) run ;;
*)
	echo "usage: $0 build|run" >&2
	exit 2
	;;
esac
