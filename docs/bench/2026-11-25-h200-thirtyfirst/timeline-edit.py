# Calls 5-6: python3 timeline-edit.py generated.cu hand-timeline.cu, where generated.cu is
# `tilego emit mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0 --target sm_90a --step 1` at this
# session's tree (the line numbers below are that program's). hand-timeline2.cu is the same with the two
# stamps inside the page loop (lines 186, 354) left out; hand-timeline3.cu is 2 without the printf line.
# The printf serializes the kernel's wgmmas (ptxas C7510): 1.66x the time, so these timelines are distorted.
# Hand edit of the h_q 128 s_q 1 split kernel (handoff): globaltimer stamps per block and piece into a device
# array, printed by one launch (the 6th) as "TL by bx smid k0 req pages t0 q s0 pv0 loop end" (absolute ns).
import sys
src = open(sys.argv[1]).read().split('\n')
L = lambda n: src[n-1]
ins = {}
def after(n, text, check):
    assert check in L(n), (n, L(n), check)
    ins.setdefault(n, []).append(text)
after(99, '  const int tl_b = by * gridDim.x + bx; unsigned long long tl_t0 = tl_gt(); __shared__ int tl_launch_s; if (tid == 0) tl_launch_s = atomicAdd(&tl_ctr, 1u) / (gridDim.x * gridDim.y); tl::bar_sync(1, 256); const int tl_launch = tl_launch_s;', 'setmaxnreg_inc<232>')
after(106, '    if (tid == 0 && k0 < 16) { tl_st[tl_b][k0][0] = tl_gt(); tl_meta[tl_b][k0][0] = req[0]; tl_meta[tl_b][k0][1] = chunks[(long long)((parts[(long long)(by) * 2] + k0)) * 4 + 2] - chunks[(long long)((parts[(long long)(by) * 2] + k0)) * 4 + 1]; }', 'mbar_wait(tl::smem_addr(smem + 229664)')
after(186, '          if (tid == 0 && k1 == lo && k0 < 16) tl_st[tl_b][k0][1] = tl_gt();', 'wgmma_wait<0>')
after(354, '          if (tid == 128 && k1 == lo && k0 < 16) tl_st[tl_b][k0][2] = tl_gt();', 'wgmma_wait<0>')
after(361, '      if (tid == 0 && k0 < 16) tl_st[tl_b][k0][3] = tl_gt();', 'the last hand-back')
after(530, '    if (tid == 0 && k0 < 16) tl_st[tl_b][k0][4] = tl_gt();', 'bar_sync(1, 256)')
assert L(531) == '  }' and L(532) == '}'
after(531, '  if (tid == 0 && tl_launch == 5) { const int np = parts[by * 2 + 1] - parts[by * 2]; unsigned sm; asm volatile("mov.u32 %0, %%smid;" : "=r"(sm)); for (int p = 0; p < np && p < 16; ++p) printf("TL %d %d %u %d %d %d %llu %llu %llu %llu %llu %llu\\n", by, bx, sm, p, tl_meta[tl_b][p][0], tl_meta[tl_b][p][1], tl_t0, tl_st[tl_b][p][0], tl_st[tl_b][p][1], tl_st[tl_b][p][2], tl_st[tl_b][p][3], tl_st[tl_b][p][4]); }', '  }')
out = []
for i, line in enumerate(src, 1):
    if i == 28:
        out += ['__device__ unsigned int tl_ctr;', '__device__ unsigned long long tl_st[512][16][5];', '__device__ int tl_meta[512][16][2];',
                '__device__ __forceinline__ unsigned long long tl_gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }']
    out.append(line)
    out += ins.get(i, [])
open(sys.argv[2], 'w').write('\n'.join(out))
