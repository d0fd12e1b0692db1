#!/usr/bin/env python3
"""MLA's split kernel (h_q 128, bf16, default config) whose epilogue stages the 64 x 512 output tile in the
piece's last page's ring slot (held past the loop: its slot is freed only once the copy has read it) and
stores it with one bulk copy (cp.async.bulk, 64 KB: the tile's rows are contiguous in O and in O_partial),
issued by warpgroup 1's first thread, instead of 16 st.global.v4 a thread. A piece without pages stores as
before.

    stage_edit.py generated.cu out.cu
"""
import sys

src = open(sys.argv[1]).read()


def sub(old, new, count=1):
    global src
    if src.count(old) != count:
        sys.exit(f"stage_edit.py: {old[:80]!r} occurs {src.count(old)} times, want {count}")
    src = src.replace(old, new)


# the consumers' piece: the staging slot, set where lo, hi and rb are known
anchor = "    L[(0)] = (int)(cache_seqlens[(long long)(req[(0)])]);\n"
i = src.find(anchor, src.find(anchor) + 1)
if i < 0:
    sys.exit("stage_edit.py: no consumer piece start")
src = src[:i + len(anchor)] + "    int stage_slot_ = -1;\n" + src[i + len(anchor):]
sub("        if (lane == 0) tl::mbar_arrive(tl::smem_addr(smem + 229648) + 8 * ((k1 - rb) % 2));\n",
    "        if (lane == 0 && k1 != hi - 1) tl::mbar_arrive(tl::smem_addr(smem + 229648) + 8 * ((k1 - rb) % 2));\n")
sub("      ring += max(0, hi - lo);\n    }\n",
    "      stage_slot_ = hi > lo ? (hi - 1 - rb) % 2 : -1;\n      ring += max(0, hi - lo);\n    }\n")

# the stores: from the split-count branch to the piece's last barrier
start = src.index("    if ((req_splits[(0)] == 1)) {\n")
end = src.rindex("    tl::bar_sync(1, 256);\n  }\n}\n")
orig = src[start:end]


def stage(acc, col):
    return f"""      if (tid / 128 == {col // 256}) {{
        const int t30 = (tid / 4 % 8) * 1 + (tid / 32 % 4) * 16;
        const int t31 = (tid / 1 % 4) * 2;
        uint16_t* const sp = (uint16_t*)stage + t30 * 512 + {col} + t31 + 6 * (tid % 4);
        #pragma unroll
        for (int r = 0; r < 128; ++r) {{
          if (r % 2 || r / 4 % 4) continue;
          uint32_t w0 = tl::pack_bf16({acc}[r + 0], {acc}[r + 1]);
          uint32_t w1 = tl::pack_bf16({acc}[r + 4], {acc}[r + 5]);
          uint32_t w2 = tl::pack_bf16({acc}[r + 8], {acc}[r + 9]);
          uint32_t w3 = tl::pack_bf16({acc}[r + 12], {acc}[r + 13]);
          tl::quad_transpose(w0, w1, w2, w3);
          *(uint4*)(sp + ((r / 2 % 2) * 8) * 512 + ((r / 1 % 2) * 1 + (r / 4 % 32) * 8)) = make_uint4(w0, w1, w2, w3);
        }}
      }}
"""


new = f"""    if (stage_slot_ >= 0) {{
      uint8_t* const stage = smem + 73728 + stage_slot_ * 73728;
{stage("acc0", 0)}{stage("acc1", 256)}      if (tid / 128 == 0) {{
        const int t46 = (tid / 4 % 8) * 1 + (tid / 32 % 4) * 16;
        #pragma unroll
        for (int r = 0; r < 2; ++r) {{
          const int c45 = t46 + (r / 1 % 2) * 8;
          if (!((tid / 1 % 4) == 0)) continue;
          if (req_splits[(0)] == 1) LSE[(long long)(req[(0)]) * 128 + (long long)(((bx * 64) / 128)) * 128 + (long long)((((bx * 64) % 128) + c45))] = (float)(lse[r]);
          else LSE_partial[(long long)(req[(0)]) * (128 * splits) + (long long)(split[(0)]) * 128 + (long long)(((bx * 64) / 128)) * 128 + (long long)((((bx * 64) % 128) + c45))] = (float)(lse[r]);
        }}
      }}
      tl::fence_proxy_async();
      tl::bar_sync(1, 256);
      if (tid == 128) {{
        const long long row0 = (long long)(((bx * 64) / 128)) * 65536 + (long long)((bx * 64) % 128) * 512;
        const uint32_t sa = tl::smem_addr(stage);
        if (req_splits[(0)] == 1) {{
          uint16_t* const dst = &O[(long long)(req[(0)]) * 65536 + row0];
          asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 65536;" ::"l"(dst), "r"(sa) : "memory");
        }} else {{
          uint16_t* const dst = &O_partial[(long long)(req[(0)]) * (65536 * splits) + (long long)(split[(0)]) * 65536 + row0];
          asm volatile("cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], 65536, %2;" ::"l"(dst), "r"(sa), "l"(tl::l2_evict_last()) : "memory");
        }}
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0], 8;" ::"r"(tl::smem_addr(smem + 229648) + 8 * stage_slot_) : "memory");
      }}
    }} else {{
{orig}    }}
"""
src = src[:start] + new + src[end:]
# the bulk copies complete before the kernel ends
tail = "    tl::bar_sync(1, 256);\n  }\n}\n"
i = src.rindex(tail)
src = src[:i] + "    tl::bar_sync(1, 256);\n  }\n  if (tid == 128) asm volatile(\"cp.async.bulk.wait_group 0;\" ::: \"memory\");\n}\n" + src[i + len(tail):]
open(sys.argv[2], "w").write(src)
