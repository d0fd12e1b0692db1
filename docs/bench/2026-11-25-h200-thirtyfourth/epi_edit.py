#!/usr/bin/env python3
"""MLA's split kernel (h_q 128, default config) with its epilogue's barriers of all 256 consumers cut to
the one it needs: the barrier before the page loop and the one after each piece go (the hand-offs on
barrier 9 already order what they ordered), the one after the loop too (the last hand-back orders it),
and the one that hands 1/l from warpgroup 0 to 1 becomes warpgroup 0's arrive and warpgroup 1's wait.
So warpgroup 0 goes on to the next piece's scores while warpgroup 1 scales and stores its half.

    epi_edit.py generated.cu out.cu
"""
import sys

src = open(sys.argv[1]).read()


def sub(old, new):
    global src
    if src.count(old) != 1:
        sys.exit(f"epi_edit.py: {old!r} occurs {src.count(old)} times, want once")
    src = src.replace(old, new)


sub("      tl::fence_proxy_async();\n      tl::bar_sync(1, 256);\n      for (int k1 = lo;",
    "      tl::fence_proxy_async();\n      for (int k1 = lo;")
sub("    tl::fence_proxy_async();\n    tl::bar_sync(1, 256);\n    if (tid / 128 == 0) {\n       {\n        const int t19",
    "    if (tid / 128 == 0) {\n       {\n        const int t19")
sub("    tl::fence_proxy_async();\n    tl::bar_sync(1, 256);\n    if (tid / 128 == 0) {\n       {\n        const int t23",
    "    if (tid / 128 == 0) tl::bar_arrive(1, 256); else tl::bar_sync(1, 256);\n    if (tid / 128 == 0) {\n       {\n        const int t23")
end = "    tl::bar_sync(1, 256);\n  }\n}\n"
i = src.rindex(end)
src = src[:i] + "  }\n}\n" + src[i + len(end):]
open(sys.argv[2], "w").write(src)
