#!/usr/bin/env bash
# Twenty-seventh session, call 3: the combine's rows a block (8 -> 4, 2); a persisting-L2 set-aside of 32 MB
# (cuCtxSetLimit) so that the partials' evict-last stores stay for the combine, alone and with pages loaded
# evict-first; warpgroup 0 freeing Q's slot at its last Q.K^T of a piece (hand-edited source). Back to back,
# three rounds, the first checked; then ncu of the combine with and without the set-aside.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/c3; S=$OUT/c3-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
run() { # label env check point
  local v=$1 e=$2 ck=$3; shift 3
  env $e timeout 60 ./bin/tilego run mla-decode "$@" --splits 0 --repeats 30 --json --check=$ck > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-44s %-10s ms %.4f ok %s' % ('$*', '$v', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "$v failed: $(tail -2 /tmp/r.err)" | tee -a $S
}
for i in 1 2 3; do
ck=$([ $i = 1 ] && echo true || echo false)
for pt in "--batch 64 --mean-kv 8192 --heads 128" "--batch 128 --mean-kv 8192 --heads 128" "--batch 64 --mean-kv 4096 --heads 128 --seq-q 2"; do
  [ $(( $(date +%s) - T0 )) -gt 480 ] && break 2
  src=bin/earlyq-sq1.cu; case "$pt" in *seq-q*) src=bin/earlyq-sq2.cu ;; esac
  run base X=1 $ck $pt
  run crows4 TILEGO_EXP_CROWS=4 $ck $pt
  run crows2 TILEGO_EXP_CROWS=2 $ck $pt
  run persist32 TILEGO_EXP_L2PERSIST=32 $ck $pt
  run pers+pgf "TILEGO_EXP_L2PERSIST=32 TILEGO_EXP_PAGEFIRST=1" $ck $pt
  run earlyq TILEGO_SOURCE=mla_decode=$src $ck $pt
done; done
grep -h "cuCtxSetLimit" /tmp/r.err | head -2 | tee -a $S
for v in X=1 TILEGO_EXP_L2PERSIST=32; do
  echo "== ncu combine $v" | tee -a $S
  env $v timeout 100 ncu --clock-control none -k regex:mla_combine -c 2 --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum ./bin/tilego run mla-decode --batch 64 --mean-kv 8192 --heads 128 --splits 0 --repeats 2 --check=false > /tmp/c3/ncu-$v.log 2>&1
  grep -E "gpu__time|dram__|lts__" /tmp/c3/ncu-$v.log | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
tar czf $OUT/c3-logs.tgz -C /tmp c3
