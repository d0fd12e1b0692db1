#!/usr/bin/env python3
"""Hand edits for call 3: oef (the output's 16-byte stores with an L2
evict-first policy), qef (the query tile's TMA loads evict-first), stN
(blocks of odd index spin N thousand cycles before they start, so that the
SMs' tile boundaries fall apart)."""
import re, sys
def oef(t):
    t2 = re.sub(r'\*\(uint4\*\)\((gp\d+ [^;]*?)\) = (make_uint4\([^;]*\));', r'tl_st_hint(\1, \2, pol_o);', t)
    assert t2 != t
    t2 = t2.replace('extern "C" __global__', '__device__ __forceinline__ void tl_st_hint(void* p, uint4 v, uint64_t pol) {\n  asm volatile("st.global.L2::cache_hint.v4.b32 [%0], {%1, %2, %3, %4}, %5;" :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "l"(pol) : "memory");\n}\n\nextern "C" __global__', 1)
    t2 = t2.replace('  tl::setmaxnreg_inc<232>();\n', '  tl::setmaxnreg_inc<232>();\n  const uint64_t pol_o = tl::l2_evict_first();\n', 1)
    return t2
def qef(t):
    ls = t.split('\n')
    i = next(i for i, l in enumerate(ls) if 'mbar_arrive_expect_tx(' in l)
    j = i + 1
    while 'tma_load_4d(' in ls[j]:
        ls[j] = ls[j].replace('tl::tma_load_4d(', 'tl::tma_load_4d_hint(').replace(');', ', tl::l2_evict_first());'); j += 1
    assert j > i + 1
    return '\n'.join(ls)
def stagger(t, n):
    t2 = t.replace('  __syncthreads();\n  if (tid >= 256) {', '  __syncthreads();\n  if (blockIdx.x & 1) { const long long t0 = clock64(); while (clock64() - t0 < %d) { } }\n  if (tid >= 256) {' % (n * 1000), 1)
    assert t2 != t
    return t2
for tag in ('a', 'b', 'c'):
    t = open(tag + '.cu').read()
    vs = {'st2': stagger(t, 2), 'st4': stagger(t, 4), 'st8': stagger(t, 8), 'qef': qef(t)}
    if 'uint4*' in t:
        vs['oef'] = oef(t)
    for k, v in vs.items():
        open('v/%s-%s.cu' % (tag, k), 'w').write(v)
