import sys
src = open(sys.argv[1]).read()
slot = "(smem + 73728 + (((k1 - rb) % 2)) * 73728 + 65536)"
def rep(a, b, n=1):
    global src
    assert src.count(a) == n, (a, src.count(a))
    src = src.replace(a, b)
# P for warpgroup 1 in the page's rope columns (dead once warpgroup 0 has the scores): the ring double-buffers it
rep("*(uint32_t*)((smem + 221184) + tl::swz", "*(uint32_t*)(" + slot + " + tl::swz")
rep("const uint32_t da_base = tl::smem_addr((smem + 221184));", "const uint32_t da_base = tl::smem_addr(" + slot + ");")
# warpgroup 1 hands back (row_s read) right after its rescale, unconditionally; one barrier before the loop
# pairs with warpgroup 0's first, and warpgroup 0's after the loop with warpgroup 1's last
rep("          tl::bar_sync_apart(9, 256); // the last iteration's tiles back to the other warpgroup\n", "")
i = src.index("(k1 - rb) & 1); // the other warpgroup's hand-off")
j = src.index("const uint32_t da_base = tl::smem_addr(" + slot, i)
j = src.rindex("           {\n            const int wg = 0;", i, j)
src = src[:j] + "          tl::bar_sync_apart(9, 256); // row_s read: warpgroup 0 may write the next\n" + src[j:]
k = src.index("for (int k1 = lo; k1 < hi; ++k1) {\n        tl::mbar_wait(tl::smem_addr(smem + 229632)")
src = src[:k] + "if (tid / 128 == 1) tl::bar_sync_apart(9, 256); // pairs with warpgroup 0's first\n      " + src[k:]
rep("      tl::bar_sync(9, 256); // the last hand-back\n", "      if (tid / 128 == 0) tl::bar_sync_apart(9, 256); // pairs with warpgroup 1's last\n")
open(sys.argv[2], "w").write(src)
