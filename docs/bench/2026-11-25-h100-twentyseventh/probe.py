#!/usr/bin/env python3
# Timing probes (twenty-seventh session, call 11; results are wrong on purpose): how much of a page is
# warpgroup 0's own P.V (noPV0: its four m64n256k16 wgmmas removed) and its exponentials (noexp: exp2 of
# the scores replaced by the plain scaled difference).
import sys
s, v = open(sys.argv[1]).read(), sys.argv[3]
if v == 'noPV0':
    lines = [l for l in s.split('\n') if 'wgmma_m64n256k16_rs_bf16<1>(&acc0[0], P[' not in l]
    assert len(lines) == len(s.split('\n')) - 4
    s = '\n'.join(lines)
if v == 'noexp':
    old = '= (float)(tl::exp2f_(((S[(r / 1 % 2) * 1 + (r / 2 % 2) * 2 + (r / 4 % 8) * 4] * 0.0601122934f)'
    assert s.count(old) == 1
    s = s.replace(old, '= (float)((((S[(r / 1 % 2) * 1 + (r / 2 % 2) * 2 + (r / 4 % 8) * 4] * 0.0601122934f)')
open(sys.argv[2], 'w').write(s)
