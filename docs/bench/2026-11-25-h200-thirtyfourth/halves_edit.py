#!/usr/bin/env python3
"""MLA's split kernel (h_q 128, default config) whose ring slots free in two parts: the panels warpgroup 0
alone reads last (V's first 256 columns and the 64 rope columns: boxes 0-3 and 8) once warpgroup 0's P·V is
done, V's other half (boxes 4-7) once warpgroup 1's is. The producer issues the first part as soon as it is
free, so most of the next page is on its way before warpgroup 1 has finished with this one. Slot s's
first part keeps the empty barrier 229648 + 8s (now 4 arrivals: warpgroup 0's warps), the second takes the
unused 128-thread barriers 229688 (slot 0) and 229704 (slot 1), every thread of warpgroup 1 arriving.

    halves_edit.py generated.cu out.cu
"""
import re
import sys

src = open(sys.argv[1]).read()


def sub(old, new):
    global src
    if src.count(old) != 1:
        sys.exit(f"halves_edit.py: {old[:90]!r} occurs {src.count(old)} times, want once")
    src = src.replace(old, new)


sub("for (int s = 0; s < 2; ++s) tl::mbar_init(tl::smem_addr(smem + 229648) + 8 * s, 8);",
    "for (int s = 0; s < 2; ++s) tl::mbar_init(tl::smem_addr(smem + 229648) + 8 * s, 4);")
sub("        __syncwarp();\n        if (lane == 0) tl::mbar_arrive(tl::smem_addr(smem + 229648) + 8 * ((k1 - rb) % 2));\n",
    "        __syncwarp();\n"
    "        if (tid / 128 == 0) { if (lane == 0) tl::mbar_arrive(tl::smem_addr(smem + 229648) + 8 * ((k1 - rb) % 2)); }\n"
    "        else tl::mbar_arrive(tl::smem_addr(smem + 229688) + 16 * ((k1 - rb) % 2));\n")
# the producer: boxes 0-3 and 8 after the first part's wait, 4-7 after the second's
i = src.index("          tl::mbar_wait(tl::smem_addr(smem + 229648) + 8 * ((k1 - rb) % 2), (((k1 - rb) / 2) & 1) ^ 1);\n")
j = src.index("          }\n", i)
block = src[i:j]
lines = block.split("\n")
loads = [l for l in lines if "tl::tma_load_3d" in l]
if len(loads) != 9:
    sys.exit(f"halves_edit.py: {len(loads)} page boxes, want 9")
first = [l for l in loads if re.search(r"\+ (0|8192|16384|24576|65536), &tm0", l)]
second = [l for l in loads if l not in first]
if len(first) != 5 or len(second) != 4:
    sys.exit("halves_edit.py: boxes not as expected")
head = [l for l in lines if "tl::tma_load_3d" not in l and l.strip()]
new = "\n".join(head[:3] + first) + "\n" \
    + "            tl::mbar_wait(tl::smem_addr(smem + 229688) + 16 * ((k1 - rb) % 2), (((k1 - rb) / 2) & 1) ^ 1);\n" \
    + "\n".join(second) + "\n"
src = src[:i] + new + src[j:]
open(sys.argv[2], "w").write(src)
