#!/usr/bin/env python3
"""Thirty-seventh session: Merge's partials read 16 bytes a lane.

In the emitted Merge split kernel (h_q 128, s_q 1) each lane reads the
partial a bf16 at a time: 128 two-byte loads a split, each warp load
touching 8 rows (8 L1 wavefronts). Here lane q of a quad loads 16 bytes
(columns 32m + 8q) and tl::quad_transpose hands each lane its own pairs,
as the stores of O do: 16 loads a split.
usage: s37_vec.py in.cu out.cu
"""
import re
import sys

src = open(sys.argv[1]).read()

def body(w, acc, col):
    return f"""        if (tid / 128 == {w}) {{
          const int q = tid % 4;
          const int row0 = (tid / 4 % 8) + (tid / 32 % 4) * 16;
          const float g0 = *(float*)((smem + 229632) + tl::swz<128, 1, 4, 8, 1>(0, row0));
          const float g1 = *(float*)((smem + 229632) + tl::swz<128, 1, 4, 8, 1>(0, row0 + 8));
          const float s0 = *(float*)((smem + 229376) + tl::swz<128, 1, 4, 8, 1>(0, row0));
          const float s1 = *(float*)((smem + 229376) + tl::swz<128, 1, 4, 8, 1>(0, row0 + 8));
          const uint16_t* const psrc = O_partial + (long long)(req[(0)]) * (65536 * splits) + (long long)(k2 + 1) * 65536 + (long long)(((bx * 64) / 128)) * 65536 + (long long)(((bx * 64) % 128) + row0) * 512 + {col} + 8 * q;
          #pragma unroll
          for (int h = 0; h < 2; ++h) {{
            const float g = h ? g1 : g0, s = h ? s1 : s0;
            #pragma unroll
            for (int m = 0; m < 8; ++m) {{
              const uint4 v = *(const uint4*)(psrc + h * 8 * 512 + m * 32);
              uint32_t ws[4] = {{v.x, v.y, v.z, v.w}};
              tl::quad_transpose(ws[0], ws[1], ws[2], ws[3]);
              #pragma unroll
              for (int j = 0; j < 4; ++j) {{
                const int r = (4 * m + j) * 4 + h * 2;
                const float lo = __uint_as_float(ws[j] << 16), hi = __uint_as_float(ws[j] & 0xffff0000u);
                {acc}[r] = g == 0.0f ? {acc}[r] * s : {acc}[r] * s + g * lo;
                {acc}[r + 1] = g == 0.0f ? {acc}[r + 1] * s : {acc}[r + 1] * s + g * hi;
              }}
            }}
          }}
        }}
"""

i = src.find("      for (int k2 = 0; k2 < (num_splits")
assert i > 0
# The two multiply-add blocks: from the first `if (tid / 128 == 0) {` after
# the loop's fence + barrier to the loop's closing barrier.
a = src.find("        tl::fence_proxy_async();\n        tl::bar_sync(1, 256);\n", i)
a = src.find("\n", src.find("tl::bar_sync(1, 256);", a)) + 1
b = src.find("        tl::bar_sync(1, 256);\n      }\n", a)
old = src[a:b]
assert old.count("O_partial[") == 2 and old.count("for (int r = 0; r < 128; ++r)") == 2, old[:200]
src = src[:a] + body(0, "acc0", 0) + body(1, "acc1", 256) + src[b:]
open(sys.argv[2], "w").write(src)
