#!/usr/bin/env python3
"""Stamp MLA's split kernel (h_q 128, the default Handoff config, as `tilego emit mla-decode --splits 0
--step 1` prints it): warpgroup 0's first thread writes tl::globaltimer() readings into tilego_stamps,
read back through TILEGO_STAMPS (target/cuda/stamps.go). Per block (blockIdx.y * gridDim.x + blockIdx.x)
50 values: its consumers' start and end, then per piece (at most 8) six: start, Q there, page loop
start, page loop end (the last hand-back), epilogue end, and the piece's page count.

    mla_stamps_edit.py generated.cu stamped.cu
"""
import sys

src = open(sys.argv[1]).read()


def after(anchor, text, nth=0):
    """Insert text after the nth occurrence of anchor."""
    global src
    i = -1
    for _ in range(nth + 1):
        i = src.index(anchor, i + 1)
    i += len(anchor)
    src = src[:i] + text + src[i:]


def stamp(slot):
    return f"if (tid == 0 && k0 < 8) tilego_stamps[sb_ + 2 + k0 * 6 + {slot}] = tl::globaltimer();\n"


after('#include "tilego.cuh"\n', "__device__ unsigned long long tilego_stamps[132 * 2 * 50];\n")
after("tl::setmaxnreg_inc<232>();\n",
      "  const int sb_ = (blockIdx.y * gridDim.x + blockIdx.x) * 50;\n"
      "  if (tid == 0) tilego_stamps[sb_] = tl::globaltimer();\n")
after("L[(0)] = (int)(cache_seqlens[(long long)(req[(0)])]);\n", "    " + stamp(0), nth=1)
after("tl::mbar_wait(tl::smem_addr(smem + 229664) + 8 * ((k0 - 0) % 1), ((k0 - 0) / 1) & 1);\n", "    " + stamp(1))
loop = "      for (int k1 = lo; k1 < hi; ++k1) {\n        tl::mbar_wait(tl::smem_addr(smem + 229632)"
i = src.index(loop)
src = src[:i] + "      " + stamp(2) + "      if (tid == 0 && k0 < 8) tilego_stamps[sb_ + 2 + k0 * 6 + 5] = hi - lo;\n" + src[i:]
after("      tl::bar_sync(9, 256); // the last hand-back\n", "      " + stamp(3))
end = "    tl::bar_sync(1, 256);\n  }\n}\n"
i = src.rindex(end)
src = (src[:i] + "    tl::bar_sync(1, 256);\n    " + stamp(4) + "  }\n"
       + "  if (tid == 0) tilego_stamps[sb_ + 1] = tl::globaltimer();\n}\n" + src[i + len(end):])
open(sys.argv[2], "w").write(src)
