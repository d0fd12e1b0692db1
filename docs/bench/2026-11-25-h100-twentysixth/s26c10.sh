#!/usr/bin/env bash
# Twenty-sixth session, call 10: ptxas's report and the SASS of MLA's split kernel (b64 h_q 128) with the
# bar.arrive hand-back (178da25's) and with the meeting (this tree). Run from a folder holding arrive.cu and meet.cu
# (tilego emit mla-decode --heads 128 --splits 4 --step 1 --target sm_90a, at each revision) and tilego.cuh.
cd "$(dirname "$0")"
for v in arrive meet; do
  nvcc -arch=sm_90a -cubin -std=c++17 -Xptxas -v -I. -o /tmp/$v.cubin $v.cu > $OUT/$v-ptxas.txt 2>&1
  cuobjdump -sass /tmp/$v.cubin > /tmp/$v.sass
  echo "$v: $(grep -c . /tmp/$v.sass) lines; $(grep -E 'registers|spill' $OUT/$v-ptxas.txt | tr '\n' ' ')"
done
tar czf $OUT/sass.tgz -C /tmp arrive.sass meet.sass
