#!/usr/bin/env python3
"""Thirty-seventh session: stamps in Merge's split kernel (h_q 128, s_q 1),
five a block (blockIdx.y * gridDim.x + blockIdx.x): 0 the consumers'
start, 1 a merger past its page loop, 2 past its wait for the partners'
counts, 3 past its merge loop, 4 the end of the block's last piece (its
stores issued). tilego's TILEGO_STAMPS writes them (target/cuda/stamps.go).
usage: s37_stamps.py in.cu out.cu
"""
import sys

src = open(sys.argv[1]).read()

def put(anchor, text, before=False, nth=1):
    global src
    assert src.count(anchor) >= nth, (src.count(anchor), anchor[:80])
    i = -1
    for _ in range(nth):
        i = src.find(anchor, i + 1)
    j = i if before else i + len(anchor)
    src = src[:j] + text + src[j:]

def st(slot):
    return f"if (tid == 0) tilego_stamps[(blockIdx.y * gridDim.x + blockIdx.x) * 5 + {slot}] = tl::globaltimer();\n"

put('#include "tilego.cuh"\n', "__device__ unsigned long long tilego_stamps[132 * 5];\n")
put("  tl::setmaxnreg_inc<232>();\n", "  " + st(0))
w = "      if (tid == 0) tl::wait_count(&merge_count["
put(w, "      " + st(1), before=True)
i = src.find(w)
j = src.find("tl::bar_sync(1, 256);\n", i) + len("tl::bar_sync(1, 256);\n")
src = src[:j] + "      " + st(2) + src[j:]
k = src.find("      for (int k2 = 0; k2 < (num_splits")
e = src.find("        tl::bar_sync(1, 256);\n      }\n", k) + len("        tl::bar_sync(1, 256);\n      }\n")
src = src[:e] + "      " + st(3) + src[e:]
tail = "    tl::bar_sync(1, 256);\n  }\n}\n"
assert src.endswith(tail), src[-200:]
src = src[: -len(tail)] + "    tl::bar_sync(1, 256);\n    " + st(4) + "  }\n}\n"
open(sys.argv[2], "w").write(src)
