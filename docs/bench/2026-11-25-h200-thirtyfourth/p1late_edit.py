#!/usr/bin/env python3
"""MLA's split kernel (h_q 128, default config) whose producer, in a block's first piece, issues the second
page only once Q and the first page have landed: at the kernel's start every block asks for Q and two
pages at once, and the second page's bytes share the DRAM with the two the first scores wait for.

    p1late_edit.py generated.cu out.cu
"""
import sys

src = open(sys.argv[1]).read()
anchor = "tl::mbar_wait(tl::smem_addr(smem + 229648) + 8 * ((k1 - rb) % 2), (((k1 - rb) / 2) & 1) ^ 1);\n"
if src.count(anchor) != 1:
    sys.exit("p1late_edit.py: no producer slot wait")
src = src.replace(anchor, anchor + "          if (k0 == 0 && k1 == lo + 1) { tl::mbar_wait(tl::smem_addr(smem + 229664), 0); "
                  "tl::mbar_wait(tl::smem_addr(smem + 229632) + 8 * ((lo - rb) % 2), 0); }\n")
open(sys.argv[2], "w").write(src)
