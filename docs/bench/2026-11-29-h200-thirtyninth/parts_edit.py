#!/usr/bin/env python3
"""Hand edit of the emitted MLA split kernel (h_q 128, sm_90a, hand-off):
each ring slot's two parts land on barriers of their own, and warpgroup 0
scores the first part's panels (V's first half and the rope columns, the
part freed first) before it waits for the second (V's second half).

The producer issues a page in two parts: part 1 once warpgroup 0 has
multiplied by the slot's last page, part 2 once warpgroup 1 has. Part 2
is the later to land, and a page's scores wait for all of it; scored
last, it has 20 of the 36 wgmmas' time more.

    parts_edit.py IN.cu OUT.cu
"""
import re
import sys

src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
SLOT = "((k1 - rb) % 2)"
PH = "(((k1 - rb) / 2) & 1)"
FULL2 = "tl::smem_addr(smem + 229688) + 16 * %s" % SLOT


def once(old, new):
    global s
    assert s.count(old) == 1, (s.count(old), old)
    s = s.replace(old, new)


# Barriers 229688 and 229704 (of the unused half of a ring of four) become
# part 2's full barriers, one arrival (the producer's expect_tx) each.
once("for (int s = 0; s < 4; ++s) tl::mbar_init(tl::smem_addr(smem + 229680) + 8 * s, 128);",
     "for (int s = 0; s < 4; ++s) tl::mbar_init(tl::smem_addr(smem + 229680) + 8 * s, (s & 1) ? 1 : 128);")
assert "229688" not in s.replace(FULL2, "") and "229704" not in s

# Producer: part 1 expects its 5 panels, part 2 its 4 on its own barrier.
once("tl::mbar_arrive_expect_tx(tl::smem_addr(smem + 229632) + 8 * (((k1 - rb) % 2)), 73728);",
     "tl::mbar_arrive_expect_tx(tl::smem_addr(smem + 229632) + 8 * (((k1 - rb) % 2)), 40960);")
p2 = s.index("tl::mbar_wait(tl::smem_addr(smem + 229712)")
p2open = s.index("{\n", p2) + 2
end = s.index("\n          }\n", p2open)
block = s[p2open:end]
assert block.count("&tm0") == 4, block.count("&tm0")
block = block.replace("tl::smem_addr(smem + 229632) + 8 * (((k1 - rb) % 2)));", FULL2 + ");")
assert block.count(FULL2) == 4
block = "            tl::mbar_arrive_expect_tx(%s, 32768);\n" % FULL2 + block
s = s[:p2open] + block + s[end:]

# Warpgroup 0 zeroes an edge page's V rows: both parts first.
once("          if ((((k1 * 64) + 64) > L[(0)])) {\n             {\n              for (int idx = tid % 128;",
     "          if ((((k1 * 64) + 64) > L[(0)])) {\n            tl::mbar_wait(%s, %s);\n             {\n              for (int idx = tid %% 128;" % (FULL2, PH))

# The scores: panels 0-3 and the rope panel, then part 2's wait, then 4-7.
pat = re.compile(r"            wgmma_m64n64k16_ss_bf16<0, 0>\(&S\[0\], tl::desc\(da_base \+ \(wg \* 64 \+ 0\) \* 128 \+ (\d+), .*\n")
lines = pat.findall(s)
full = [m.group(0) for m in pat.finditer(s)]
assert len(full) == 36
offs = [int(x) for x in lines]
first = [l for l, o in zip(full, offs) if o < 32768 or o >= 65536]
second = [l for l, o in zip(full, offs) if 32768 <= o < 65536]
assert len(first) == 20 and len(second) == 16 and ", 0);" in first[0]
start = s.index(full[0]); stop = s.index(full[-1]) + len(full[-1])
mid = ("            tl::wgmma_commit();\n"
       "            tl::mbar_wait(%s, %s); // part 2\n"
       "            tl::wgmma_fence();\n") % (FULL2, PH)
s = s[:start] + "".join(first) + mid + "".join(second) + s[stop:]

# Warpgroup 1 multiplies by V's second half: part 2 landed (it has, since
# warpgroup 0's hand-off follows its wait; this makes it the barrier's too).
once("          tl::mbar_wait(tl::smem_addr(smem + 229680), (k1 - rb) & 1); // the other warpgroup's hand-off\n",
     "          tl::mbar_wait(tl::smem_addr(smem + 229680), (k1 - rb) & 1); // the other warpgroup's hand-off\n"
     "          tl::mbar_wait(%s, %s);\n" % (FULL2, PH))
open(dst, "w").write(s)
print(dst, "written")
