#!/usr/bin/env python3
# Hand edits of the split MLA kernel (h_q 128, hand-offs) for racecheck bisection (twenty-seventh session).
#   R1: warpgroup 1 reads no row factors in the page loop (1.0f): do the reports name those reads?
#   R2: the forward hand-off (bar.arrive/bar.sync 8) as an mbarrier of warpgroup 0's 128 arrivals, parity wait.
#   R3: the hand-back (meetings at 9) as an mbarrier of 256 arrivals: warpgroup 1 arrives, warpgroup 0
#       arrives and waits for its phase (state token), both arrive-and-wait after the loop.
#   R4: R2 and R3.  R5: R4 without warpgroup 0's own barrier after zeroing an edge page (diagnosis only).
#   R6: R2 without that barrier (diagnosis only).  R7: R2 with that barrier as an mbarrier of warpgroup 0's
#   128 threads (arrive, wait for the phase).  R8: R7's edge barrier with the named-barrier hand-offs.
#   R9: R2 with the edge barrier as a non-aligned barrier.sync.  R10: R7 with the forward mbarrier taking
#   lane 0 of each warp (4 arrivals) after __syncwarp.
import sys
src = open(sys.argv[1]).read()
out = sys.argv[2]

def sub(s, old, new):
    assert s.count(old) == 1, old
    return s.replace(old, new)

PRE = r'''
__device__ __forceinline__ void xb_arrive_wait(uint32_t a) {
  asm volatile("{\n.reg .b64 st;\n.reg .pred p;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n"
               "W%=:\nmbarrier.try_wait.shared::cta.b64 p, [%0], st;\n@!p bra W%=;\n}" ::"r"(a) : "memory");
}
'''
def mbars(s):
    s = sub(s, 'extern "C" __global__', PRE + 'extern "C" __global__')
    s = sub(s, '  extern __shared__ __align__(1024) uint8_t smem[];\n',
            '  extern __shared__ __align__(1024) uint8_t smem[];\n  __shared__ __align__(8) unsigned long long xb[2];\n'
            '  const uint32_t xfwd = tl::smem_addr(&xb[0]), xback = tl::smem_addr(&xb[1]);\n')
    s = sub(s, '    for (int s = 0; s < 1; ++s) tl::mbar_init(tl::smem_addr(smem + 229672) + 8 * s, 8);\n',
            '    for (int s = 0; s < 1; ++s) tl::mbar_init(tl::smem_addr(smem + 229672) + 8 * s, 8);\n'
            '    tl::mbar_init(xfwd, 128);\n    tl::mbar_init(xback, 256);\n')
    return s

def r1(s):
    return s.replace('*(float*)((smem + 229376) + tl::swz<128, 1, 4, 8, 1>(0, i10))', '1.0f')

def r2(s):
    s = sub(s, 'tl::bar_arrive(8, 256); // hand-off to the other warpgroup', 'tl::mbar_arrive(xfwd); // hand-off (mbarrier)')
    s = sub(s, 'tl::bar_sync(8, 256); // the other warpgroup\'s hand-off', 'tl::mbar_wait(xfwd, (k1 - rb) & 1); // hand-off (mbarrier)')
    return s

def r3(s):
    s = sub(s, 'tl::bar_sync_apart(9, 256); // the other warpgroup\'s hand-off', 'xb_arrive_wait(xback);')
    s = sub(s, 'tl::bar_sync_apart(9, 256); // the last iteration\'s tiles back to the other warpgroup', 'tl::mbar_arrive(xback);')
    s = sub(s, 'tl::bar_sync(9, 256); // the last hand-back', 'xb_arrive_wait(xback);')
    return s

def edge_mbar(s):  # warpgroup 0's own barrier after zeroing an edge page as an mbarrier of its 128 threads
    s = sub(s, '    tl::mbar_init(xback, 256);\n', '    tl::mbar_init(xback, 256);\n    tl::mbar_init(xedge, 128);\n')
    s = sub(s, 'xback = tl::smem_addr(&xb[1]);', 'xback = tl::smem_addr(&xb[1]), xedge = tl::smem_addr(&xb[2]);')
    s = sub(s, 'unsigned long long xb[2];', 'unsigned long long xb[3];')
    return sub(s, '            tl::fence_proxy_async();\n            tl::bar_sync(4, 128);\n', '            tl::fence_proxy_async();\n            xb_arrive_wait(xedge);\n')

def edge_apart(s):
    return sub(s, '            tl::fence_proxy_async();\n            tl::bar_sync(4, 128);\n', '            tl::fence_proxy_async();\n            tl::bar_sync_apart(4, 128);\n')

def fwd_lane0(s):  # the forward mbarrier of 4 arrivals, lane 0 of each warp after __syncwarp
    s = sub(s, 'tl::mbar_init(xfwd, 128);', 'tl::mbar_init(xfwd, 4);')
    return sub(s, 'tl::mbar_arrive(xfwd); // hand-off (mbarrier)', '__syncwarp(); if (lane == 0) tl::mbar_arrive(xfwd); // hand-off (mbarrier)')

def r5(s):
    return sub(s, '            tl::fence_proxy_async();\n            tl::bar_sync(4, 128);\n', '            tl::fence_proxy_async();\n')

v = sys.argv[3]
s = src
if v in ('R2', 'R3', 'R4', 'R5', 'R6', 'R7', 'R8', 'R9', 'R10'):
    s = mbars(s)
if v in ('R6', 'R7', 'R9', 'R10'):
    s = r2(s)
if v == 'R6':
    s = r5(s)
if v in ('R7', 'R8', 'R10'):
    s = edge_mbar(s)
if v == 'R9':
    s = edge_apart(s)
if v == 'R10':
    s = fwd_lane0(s)
if v == 'R1':
    s = r1(s)
if v in ('R2', 'R4', 'R5'):
    s = r2(s)
if v in ('R3', 'R4', 'R5'):
    s = r3(s)
if v == 'R5':
    s = r5(s)
open(out, 'w').write(s)
