#!/usr/bin/env python3
"""Hand edit of the emitted MLA split kernel (h_q 128, sm_90a, hand-off):
warpgroup 0 keeps the first NQ k16-steps of its Q tile in registers (the
wgmma A-operand layout, 4 registers a step) and scores those steps with
register-sourced wgmmas, the rest as before from shared memory. Each such
step reads 2 KB less shared memory a page.

    qreg_edit.py IN.cu OUT.cu NQ [MAXNREG]
"""
import re
import sys

src, dst, nq = sys.argv[1], sys.argv[2], int(sys.argv[3])
maxnreg = int(sys.argv[4]) if len(sys.argv) > 4 else 0
s = open(src).read()

helper = r'''
template <int TB>
__device__ __forceinline__ void wgmma_m64n64k16_rs_bf16(float* d, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
    "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db), "r"(scale_d), "n"(TB));
}
'''
s = s.replace('#include "tilego.cuh"\n', '#include "tilego.cuh"\n' + helper, 1)

# Q's registers, declared beside P.
s = s.replace("  uint32_t P[16];\n", "  uint32_t P[16];\n  uint32_t QA[%d];\n" % max(4 * nq, 4), 1)

# Load them once a piece, after Q lands (the consumers' wait on Q's barrier).
qwait = "    tl::mbar_wait(tl::smem_addr(smem + 229664) + 8 * ((k0 - 0) % 1), ((k0 - 0) / 1) & 1);\n"
assert s.count(qwait) == 1, s.count(qwait)
load = '''    if (tid / 128 == 0) {
      const int r0 = (tid % 128) / 32 * 16 + (lane / 4), c0 = (lane % 4) * 2;
      #pragma unroll
      for (int kk = 0; kk < NQ; ++kk) {
        QA[4 * kk + 0] = *(const uint32_t*)(smem + tl::swz<128, 64, 2, 8, 1>(r0, kk * 16 + c0));
        QA[4 * kk + 1] = *(const uint32_t*)(smem + tl::swz<128, 64, 2, 8, 1>(r0 + 8, kk * 16 + c0));
        QA[4 * kk + 2] = *(const uint32_t*)(smem + tl::swz<128, 64, 2, 8, 1>(r0, kk * 16 + 8 + c0));
        QA[4 * kk + 3] = *(const uint32_t*)(smem + tl::swz<128, 64, 2, 8, 1>(r0 + 8, kk * 16 + 8 + c0));
      }
    }
'''.replace("NQ", str(nq))
s = s.replace(qwait, qwait + load, 1)

# The scores: the first nq of the 36 ss wgmmas into S become rs.
pat = re.compile(r"wgmma_m64n64k16_ss_bf16<0, 0>\(&S\[0\], tl::desc\(da_base \+ \(wg \* 64 \+ 0\) \* 128 \+ (\d+), 16, 1024, 1\), tl::desc\(db_base \+ (\d+), 16, 1024, 1\), ([01])\);")
hits = pat.findall(s)
assert len(hits) == 36, len(hits)
count = [0]
def sub(m):
    i = count[0]; count[0] += 1
    if i >= nq:
        return m.group(0)
    return "wgmma_m64n64k16_rs_bf16<0>(&S[0], QA[%d], QA[%d], QA[%d], QA[%d], tl::desc(db_base + %s, 16, 1024, 1), %s);" % (
        4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3, m.group(2), m.group(3))
s = pat.sub(sub, s)
# The order of the 36: k-step i is panel i // 4, 32 bytes a step within it.
for i, (a, b, _) in enumerate(hits):
    assert int(a) == int(b) == (i // 4) * 8192 + (i % 4) * 32, (i, a, b)

if maxnreg:
    s = s.replace("tl::setmaxnreg_inc<232>();", "tl::setmaxnreg_inc<%d>();" % maxnreg, 1)
    s = s.replace("tl::setmaxnreg_dec<40>();", "tl::setmaxnreg_dec<%d>();" % (24 if maxnreg == 240 else 40), 1)
open(dst, "w").write(s)
print("%s: %d of 36 score steps from registers%s" % (dst, nq, ", setmaxnreg %d" % maxnreg if maxnreg else ""))
