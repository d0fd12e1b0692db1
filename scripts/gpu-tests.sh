#!/usr/bin/env bash
# Every GPU test in one device call of about 8 minutes (16 cores, an H200):
# groups of the cuda backend's tests run at once (NVRTC compiles on every
# core; each group's kernels run while others compile), the timing tests
# alone at the end. Run from the repository root on the device machine,
# after `scripts/gpu-suite.sh build` here (carry bin/):
#
#   bash scripts/gpu-tests.sh            # logs under $OUT/tests
#
# FUZZ=N adds N programs of `tilego fuzz` on both CUDA paths (FUZZ_SEED).
# Prints a line per group (passed, failed, skipped, exit; 124 = timed out)
# and the failures; exits 1 on any failure.
set -u
T0=$(date +%s)
export TILEGO_REQUIRE_GPU=1 TILEGO_HANG_S=60
L=${OUT:-/tmp}/tests
mkdir -p "$L"
C=./bin/cuda_backend.test
group() { # name, then the test binary and its arguments
	local name=$1
	shift
	(
		timeout 480 "$@" -test.v -test.timeout 480s >"$L/$name.log" 2>&1
		rc=$?
		echo "$name: $(grep -c -- '--- PASS' "$L/$name.log") passed, $(grep -c -- '--- FAIL' "$L/$name.log") failed, $(grep -c -- '--- SKIP' "$L/$name.log") skipped, exit $rc, $(($(date +%s) - T0)) s"
	) >"$L/$name.sum" &
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
group attn $C -test.run '^(TestGPUAttnBwd|TestGPUAttnMods|TestGPUVarlen|TestGPUKVCache)$'
group gemm $C -test.run '^(TestGPUGemm|TestGPUGemmF8|TestGPUGemmEpilogueSplitK|TestGPURowScale|TestGPUStamps)$'
group small $C -test.run '^(TestGPUDeviceTensors|TestGPUEdgePrograms|TestGPUSharedTileAdds|TestGPUExamples|TestGPUMLASixtyFourThreads|TestGPURowKernels|TestGPUMath|TestGPUSoftmax|TestGPUSm80)$'
group deferred $C -test.run '^(TestGPUCluster|TestGPUDeferred)$'
group persistent $C -test.run '^TestGPUPersistent$'
group mla $C -test.run '^(TestGPUMLADecode|TestGPUFlashAttentionSplit|TestGPUFlashAttentionTail|TestGPUFlashAttentionWide)$'
group fa $C -test.run '^(TestGPUFlashAttention|TestGPUFlashAttentionLarge)$'
group tma1 $C -test.run '^TestGPUTMA$/^wsfalse'
group tma2 $C -test.run '^TestGPUTMA$/^wstrue'
group tma3 $C -test.run '^TestGPUTMA$/^(pingpong|gemm_ws|mla)'
(
	for t in runtime jit autotune bench; do
		timeout 300 ./bin/$t.test -test.v -test.timeout 300s -test.skip '^TestGPUHangIsReported$' >"$L/pkg-$t.log" 2>&1
		rc=$?
		echo "$t: $(grep -c -- '--- PASS' "$L/pkg-$t.log") passed, $(grep -c -- '--- FAIL' "$L/pkg-$t.log") failed, $(grep -c -- '--- SKIP' "$L/pkg-$t.log") skipped, exit $rc, $(($(date +%s) - T0)) s"
	done
) >"$L/pkgs.sum" &
if [ "${FUZZ:-0}" -gt 0 ]; then
	(
		timeout 400 ./bin/tilego fuzz --backend gpu --target both --n "$FUZZ" --seed "${FUZZ_SEED:-$(date +%s)}" --shrink 10 --out "$L/fuzz" >"$L/fuzz.log" 2>&1
		echo "fuzz: exit $?: $(grep -E 'programs in' "$L/fuzz.log")"
	) >"$L/fuzz.sum" &
fi
wait
# The timing tests and the hang watchdog alone: nothing else on the GPU.
group timing $C -test.run '^(TestGPUChainTime|TestGPUCopyRate)$'
wait
TILEGO_TEST_HANG=1 timeout 60 ./bin/runtime.test -test.v -test.run '^TestGPUHangIsReported$' >"$L/hang.log" 2>&1
echo "hang watchdog: exit $?, $(grep -c -- '--- PASS' "$L/hang.log") passed" >"$L/hang.sum"
cat "$L"/*.sum
grep -h -B2 -A12 -- '--- FAIL' "$L"/*.log | head -80
echo "$(($(date +%s) - T0)) s"
! grep -q -- '--- FAIL' "$L"/*.log
