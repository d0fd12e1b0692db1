#!/usr/bin/env bash
# Thirty-sixth session, call 3: why Merge (call 2: 0.96-0.97x) is slower. Spills and SASS of its split
# kernel, its GPU tests and sanitizers (call 2's filter matched nothing), then pairs at h_q 128 kv8k:
#   base          the default (b64: Early)        noearly  early=false
#   merge         merge=true early=false
#   merge_nocoop  the same launched plainly (TILEGO_COOP=0; the grid is one block an SM)
#   merge_noloop  merge with the merger's loop over the other splits cut out (bin/src36/split_merge_noloop.cu;
#                 outputs wrong, not checked): what the merge's own work costs
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c3-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
X=bin/src36
nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xptxas -v -Ibin/src -Itarget/cuda/include -o /tmp/m.cubin $X/split_merge.cu 2>&1 | grep -E 'registers|spill' | tee -a $S
cuobjdump -sass /tmp/m.cubin > $OUT/split_merge.sass
echo "split_merge: $(grep -cE 'STL' $OUT/split_merge.sass) STL, $(grep -cE 'LDL' $OUT/split_merge.sass) LDL, $(grep -c HGMMA $OUT/split_merge.sass) HGMMA" | tee -a $S
timeout 240 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode/sm_90a/.*(merge|early)$' -test.v > $OUT/c3-tests.log 2>&1
echo "merge and early tests: exit $? $(grep -c '^        --- PASS' $OUT/c3-tests.log) passed, $(grep -c -- '--- FAIL' $OUT/c3-tests.log) failed" | tee -a $S
grep -E -- '--- FAIL|_test.go' $OUT/c3-tests.log | head -20 | tee -a $S
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode/sm_90a/(split_sched_hq64_handoff_merge|split_3parts_hq128_handoff_merge)$' -test.v > $OUT/c3-san-$tool.log 2>&1
  echo "$tool: exit $? $(grep -c -- '--- PASS' $OUT/c3-san-$tool.log) passed; $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/c3-san-$tool.log)" | tee -a $S
done
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192"; do
  R="run mla-decode $pt --splits 0 --repeats 30 --json --flush-l2"
  M="./bin/tilego $R --config 'merge=true early=false'"
  timeout 200 python3 scripts/pairs.py --rounds 3 base="./bin/tilego $R" noearly="./bin/tilego $R --config early=false" merge="$M" \
    merge_nocoop="TILEGO_COOP=0 $M" merge_noloop="TILEGO_SOURCE=mla_decode=$X/split_merge_noloop.cu $M --check=false #" 2>&1 | tail -8 | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
