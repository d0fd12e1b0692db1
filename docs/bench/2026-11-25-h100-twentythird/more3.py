#!/usr/bin/env python3
"""Hand edits for call 4: kvel (K and V loaded with an L2 evict-last
policy), qkv (qef and kvel), qo (qef and oef), slN (the blocks that walk one
tile fewer, index 100 and up at B32 H8 d256, start N thousand cycles
late: the delay costs nothing if under a tile)."""
import re, importlib.util
spec = importlib.util.spec_from_file_location('m2', 'more2.py')
def load():
    import types
    src = open('more2.py').read().split('for tag in')[0]
    ns = {}
    exec(src, ns)
    return ns
m2 = load()
def kvel(t):
    ls = t.split('\n')
    idx = [i for i, l in enumerate(ls) if 'mbar_arrive_expect_tx(' in l][1:3]  # K, then V (the first is Q)
    for i in idx:
        j = i + 1
        while 'tma_load_4d(' in ls[j]:
            ls[j] = ls[j].replace('tl::tma_load_4d(', 'tl::tma_load_4d_hint(').replace(');', ', tl::l2_evict_last());'); j += 1
        assert j > i + 1
    return '\n'.join(ls)
def slack(t, n):
    t2 = t.replace('  __syncthreads();\n  if (tid >= 256) {', '  __syncthreads();\n  if (blockIdx.x >= 100) { const long long t0 = clock64(); while (clock64() - t0 < %d) { } }\n  if (tid >= 256) {' % (n * 1000), 1)
    assert t2 != t
    return t2
for tag in ('a', 'b'):
    t = open(tag + '.cu').read()
    vs = {'kvel': kvel(t), 'qkv': kvel(m2['qef'](t)), 'qo': m2['oef'](m2['qef'](t))}
    if tag == 'a':
        vs['sl8'] = slack(t, 8); vs['sl15'] = slack(t, 15)
    for k, v in vs.items():
        open('v/%s-%s.cu' % (tag, k), 'w').write(v)
