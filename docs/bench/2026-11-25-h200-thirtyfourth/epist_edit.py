#!/usr/bin/env python3
"""The epilogue's steps stamped, on top of pages2_edit.py's output: at 264 * 51 + 264 * 128, per block 32
values, for the first two pieces (16 each) and each warpgroup's first thread (8 each): 0 past the last
hand-back, 1 past the epilogue's first barrier, 2 past its second, 3 the output scaled, 4 the stores issued,
5 past the last barrier.

    epist_edit.py pages2.cu out.cu
"""
import sys

src = open(sys.argv[1]).read()


def st(slot):
    return (f"if ((tid == 0 || tid == 128) && k0 < 2) tilego_stamps[264 * 51 + 264 * 128 + (blockIdx.y * gridDim.x + blockIdx.x) * 32"
            f" + k0 * 16 + (tid / 128) * 8 + {slot}] = tl::globaltimer();\n")


def put(anchor, text, before=False):
    global src
    if src.count(anchor) != 1:
        sys.exit(f"epist_edit.py: {anchor!r} occurs {src.count(anchor)} times, want once")
    i = src.find(anchor)
    j = i if before else i + len(anchor)
    src = src[:j] + text + src[j:]


put("      tl::bar_sync(9, 256); // the last hand-back\n", "      " + st(0))
put("    tl::bar_sync(1, 256);\n    if (tid / 128 == 0) {\n       {\n        const int t19", "    " + st(1), before=True)
src = src.replace("    " + st(1) + "    tl::bar_sync(1, 256);\n", "    tl::bar_sync(1, 256);\n    " + st(1), 1)
put("    tl::bar_sync(1, 256);\n    if (tid / 128 == 0) {\n       {\n        const int t23", "    " + st(2), before=True)
src = src.replace("    " + st(2) + "    tl::bar_sync(1, 256);\n", "    tl::bar_sync(1, 256);\n    " + st(2), 1)
put("    if ((req_splits[(0)] == 1)) {\n", "    " + st(3), before=True)
end = "    tl::bar_sync(1, 256);\n    if (tid == 0 && k0 < 8) tilego_stamps[sb_ + 2 + k0 * 6 + 4]"
put(end, "    " + st(4), before=True)
put("    tl::bar_sync(1, 256);\n    if (tid == 0 && k0 < 8) tilego_stamps[sb_ + 2 + k0 * 6 + 4] = tl::globaltimer();\n", "    " + st(5))
open(sys.argv[2], "w").write(src)
