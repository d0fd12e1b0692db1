import sys, re
src = open(sys.argv[1]).read()
slot = "(smem + 73728 + (((k1 - rb) % 2)) * 73728 + 65536)"
# P to warpgroup 1 in the page's rope columns (dead once S is taken), not in ps
n1 = src.count("*(uint32_t*)((smem + 221184) + tl::swz")
src = src.replace("*(uint32_t*)((smem + 221184) + tl::swz", "*(uint32_t*)(" + slot + " + tl::swz")
n2 = src.count("const uint32_t da_base = tl::smem_addr((smem + 221184));")
src = src.replace("const uint32_t da_base = tl::smem_addr((smem + 221184));", "const uint32_t da_base = tl::smem_addr(" + slot + ");")
# warpgroup 1 hands back (row_s free) right after its rescale, not after its P.V
top = "          tl::bar_sync_apart(9, 256); // the last iteration's tiles back to the other warpgroup\n"
n3 = src.count(top)
src = src.replace(top, "          if (k1 == lo) tl::bar_sync_apart(9, 256); // pairs with warpgroup 0's first\n")
i = src.index("(k1 - rb) & 1); // the other warpgroup's hand-off")
j = src.index("const uint32_t da_base = tl::smem_addr(" + slot, i)
j = src.rindex("           {\n            const int wg = 0;", i, j)
src = src[:j] + "          if (k1 + 1 < hi) tl::bar_sync_apart(9, 256); // row_s read: warpgroup 0 may write the next\n" + src[j:]
assert (n1, n2, n3) == (1, 1, 1), (n1, n2, n3)
open(sys.argv[2], "w").write(src)
