#!/usr/bin/env python3
"""Per-page stamps for the first piece of each block, on top of scripts/mla_stamps_edit.py's output:
after its 264 * 51 values, 264 blocks * 16 pages * 4: the producer's issue of the page (after its slot is
free), warpgroup 0 past the page's full wait, warpgroup 0's hand-off of P, warpgroup 1's P·V done.

    pages_edit.py stamped.cu out.cu
"""
import sys

src = open(sys.argv[1]).read()


def put(anchor, text, nth=0, before=False):
    global src
    i = -1
    for _ in range(nth + 1):
        i = src.find(anchor, i + 1)
        if i < 0:
            sys.exit(f"no {anchor!r}")
    j = i if before else i + len(anchor)
    src = src[:j] + text + src[j:]


src = src.replace("tilego_stamps[264 * 50 + 264];", "tilego_stamps[264 * 51 + 264 * 64];", 1)


def st(who, slot):
    return (f"if ({who} && k0 == 0 && k1 - lo < 16) tilego_stamps[264 * 51 + (blockIdx.y * gridDim.x + blockIdx.x) * 64"
            f" + (k1 - lo) * 4 + {slot}] = tl::globaltimer();\n")


put("tl::mbar_wait(tl::smem_addr(smem + 229648) + 8 * ((k1 - rb) % 2), (((k1 - rb) / 2) & 1) ^ 1);\n", "          " + st("true", 0))
put("tl::mbar_wait(tl::smem_addr(smem + 229632) + 8 * ((k1 - rb) % 2), ((k1 - rb) / 2) & 1);\n", "        " + st("tid == 0", 1))
put("tl::mbar_arrive(tl::smem_addr(smem + 229680)); // hand-off to the other warpgroup\n", "          " + st("tid == 0", 2))
i = src.find("(&acc1[0], tl::desc(da_base + (wg * 64 + 0) * 128 + 96")
j = src.find("tl::wgmma_wait<0>();\n", i) + len("tl::wgmma_wait<0>();\n")
src = src[:j] + "          " + st("tid == 128", 3) + src[j:]
open(sys.argv[2], "w").write(src)
