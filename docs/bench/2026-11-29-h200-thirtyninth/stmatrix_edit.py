#!/usr/bin/env python3
"""Hand edit of the emitted MLA split kernel (h_q 128, sm_90a, hand-off):
warpgroup 0 writes P for warpgroup 1 with four stmatrix.x4 a thread (the
8x8 tiles of its m64n64 fragment, 16-byte rows into the 128-byte swizzled
tile) in place of sixteen 4-byte stores; with NOFENCE, also without the
proxy fence before it waits for warpgroup 1's hand-back (nothing was
written to shared memory since the fence of the last hand-off).

    stmatrix_edit.py IN.cu OUT.cu [NOFENCE]
"""
import sys

src, dst = sys.argv[1], sys.argv[2]
nofence = len(sys.argv) > 3 and sys.argv[3] == "NOFENCE"
s = open(src).read()


def once(old, new):
    global s
    assert s.count(old) == 1, (s.count(old), old[:80])
    s = s.replace(old, new)


old_start = s.index("              *(uint32_t*)((smem + 221184) + tl::swz<128, 64, 2, 8, 1>((c13), c14)) = tl::pack_bf16(S[r], S[r + 1]);")
blk = s.rindex("           {\n", 0, old_start)
end = s.index("\n          }\n", old_start) + len("\n          }\n")
new = '''           {
            const int k = lane / 8, j = lane % 8;
            const int row = (tid / 32 % 4) * 16 + (k % 2) * 8 + j;
            #pragma unroll
            for (int q = 0; q < 4; ++q) {
              const uint32_t a = tl::smem_addr(smem + 221184 + row * 128 + (((2 * q + k / 2) ^ j) << 4));
              asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                :: "r"(a), "r"(tl::pack_bf16(S[8 * q], S[8 * q + 1])), "r"(tl::pack_bf16(S[8 * q + 2], S[8 * q + 3])),
                   "r"(tl::pack_bf16(S[8 * q + 4], S[8 * q + 5])), "r"(tl::pack_bf16(S[8 * q + 6], S[8 * q + 7])) : "memory");
            }
          }
'''
s = s[:blk] + new + s[end:]
if nofence:
    once("          tl::fence_proxy_async();\n          tl::bar_sync_apart(9, 256); // the other warpgroup's hand-off\n",
         "          tl::bar_sync_apart(9, 256); // the other warpgroup's hand-off\n")
open(dst, "w").write(s)
print(dst, "written", "(no fence)" if nofence else "")
