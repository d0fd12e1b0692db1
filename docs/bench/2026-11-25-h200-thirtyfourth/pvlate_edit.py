#!/usr/bin/env python3
"""MLA's split kernel (h_q 128, default config) with warpgroup 1's P·V of page j issued only once warpgroup 0
has the scores of page j+1 (an mbarrier, the unused 229688, each of warpgroup 0's 128 threads arriving after
its scores' wait): the tensor cores then run that multiply under warpgroup 0's softmax of page j+1 instead
of beside its scores. The last page of a piece does not wait.

    pvlate_edit.py generated.cu out.cu
"""
import sys

src = open(sys.argv[1]).read()


def sub(old, new):
    global src
    if src.count(old) != 1:
        sys.exit(f"pvlate_edit.py: {old!r} occurs {src.count(old)} times, want once")
    src = src.replace(old, new)


sub("          tl::wgmma_wait<0>();\n          #pragma unroll\n          for (int r = 0; r < 32; ++r) asm volatile(\"\" : \"+f\"(S[r])::\"memory\");\n",
    "          tl::wgmma_wait<0>();\n          #pragma unroll\n          for (int r = 0; r < 32; ++r) asm volatile(\"\" : \"+f\"(S[r])::\"memory\");\n"
    "          tl::mbar_arrive(tl::smem_addr(smem + 229688)); // page k1's scores are in\n")
sub("           {\n            const int wg = 0;\n            const uint32_t da_base = tl::smem_addr((smem + 221184));\n",
    "          if (k1 + 1 < hi) tl::mbar_wait(tl::smem_addr(smem + 229688), ((k1 - rb) + 1) & 1); // the next page's scores\n"
    "           {\n            const int wg = 0;\n            const uint32_t da_base = tl::smem_addr((smem + 221184));\n")
open(sys.argv[2], "w").write(src)
