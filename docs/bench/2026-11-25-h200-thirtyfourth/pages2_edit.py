#!/usr/bin/env python3
"""Per-page stamps for the first piece of each block, on top of scripts/mla_stamps_edit.py's output (as
pages_edit.py, with more points): after its 264 * 51 values, 264 blocks * 16 pages * 8: 0 the producer's
issue (its slot free), 1 warpgroup 0 at the page's full wait, 2 past it, 3 its scores in, 4 its hand-off of P,
5 warpgroup 1 issuing its P·V, 6 warpgroup 1's P·V done.

    pages2_edit.py stamped.cu out.cu
"""
import sys

src = open(sys.argv[1]).read()


def put(anchor, text, before=False):
    global src
    if src.count(anchor) != 1:
        sys.exit(f"pages2_edit.py: {anchor!r} occurs {src.count(anchor)} times, want once")
    i = src.find(anchor)
    j = i if before else i + len(anchor)
    src = src[:j] + text + src[j:]


src = src.replace("tilego_stamps[264 * 50 + 264];", "tilego_stamps[264 * 51 + 264 * 128 + 264 * 32];", 1)  # the last 264 * 32: epist_edit.py


def st(who, slot):
    return (f"if ({who} && k0 == 0 && k1 - lo < 16) tilego_stamps[264 * 51 + (blockIdx.y * gridDim.x + blockIdx.x) * 128"
            f" + (k1 - lo) * 8 + {slot}] = tl::globaltimer();\n")


put("tl::mbar_wait(tl::smem_addr(smem + 229648) + 8 * ((k1 - rb) % 2), (((k1 - rb) / 2) & 1) ^ 1);\n", "          " + st("true", 0))
full = "        tl::mbar_wait(tl::smem_addr(smem + 229632) + 8 * ((k1 - rb) % 2), ((k1 - rb) / 2) & 1);\n"
put(full, "        " + st("tid == 0", 1), before=True)
put(full, "        " + st("tid == 0", 2))
put("          for (int r = 0; r < 32; ++r) asm volatile(\"\" : \"+f\"(S[r])::\"memory\");\n", "          " + st("tid == 0", 3))
put("tl::mbar_arrive(tl::smem_addr(smem + 229680)); // hand-off to the other warpgroup\n", "          " + st("tid == 0", 4))
put("           {\n            const int wg = 0;\n            const uint32_t da_base = tl::smem_addr((smem + 221184));\n", "          " + st("tid == 128", 5), before=True)
i = src.find("(&acc1[0], tl::desc(da_base + (wg * 64 + 0) * 128 + 96")
j = src.find("tl::wgmma_wait<0>();\n", i) + len("tl::wgmma_wait<0>();\n")
src = src[:j] + "          " + st("tid == 128", 6) + src[j:]
open(sys.argv[2], "w").write(src)
