#!/usr/bin/env bash
# Twenty-sixth session, call 9: the GPU tests of scripts/gpu-suite.sh (TESTS=1) on the code as landed, no
# benchmark (it ran out of its 580 s in TestGPUPersistent, all passed until then). "san" (SAN=1) was not run.
# Usage: s26c9.sh tests|san
cd "$(dirname "$0")/.."
case "$1" in
tests) n=9; export TESTS=1 SAN=0 ;;
san) n=10; export TESTS=0 SAN=1 ;;
*) echo "usage: $0 tests|san" >&2; exit 2 ;;
esac
mkdir -p $OUT
OUT=/tmp/c$n BENCH=0 PEERS=0 timeout 580 bash scripts/gpu-suite.sh run > /tmp/c$n.txt 2>&1
echo "exit $?" >> /tmp/c$n.txt
cp /tmp/c$n.txt $OUT/c$n-summary.txt
tar czf $OUT/c$n-logs.tgz -C /tmp c$n
tail -40 /tmp/c$n.txt
