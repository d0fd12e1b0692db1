#!/usr/bin/env python3
"""Hand edits for call 5: the late start's delay. lR_N: blocks of index R
and up (those that walk one tile fewer) start N thousand cycles late; qlR_N
also loads the query tile evict-first (more2.qef)."""
ns = {}
exec(open('more2.py').read().split('for tag in')[0], ns)
def late(t, r, n):
    t2 = t.replace('  __syncthreads();\n  if (tid >= 256) {', '  __syncthreads();\n  if (blockIdx.x >= %d) { const long long t0 = clock64(); while (clock64() - t0 < %d) { } }\n  if (tid >= 256) {' % (r, n * 1000), 1)
    assert t2 != t
    return t2
for tag, r, ns_ in (('a', 100, (4, 6, 8, 11)), ('c', 68, (2, 4, 6)), ('d', 100, (6, 8, 12, 16))):
    t = open(tag + '.cu').read()
    for n in ns_:
        open('v/%s-l%d.cu' % (tag, n), 'w').write(late(t, r, n))
    open('v/%s-base.cu' % tag, 'w').write(t)
t = open('a.cu').read()
open('v/a-ql8.cu', 'w').write(late(ns['qef'](t), 100, 8))
