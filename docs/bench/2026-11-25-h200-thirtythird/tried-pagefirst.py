import sys
# The producer issues a piece's first page before waiting for Q's slot: that page's ring slot frees while the
# piece before still runs its last page, Q's only when that piece's page loop ends.
src = open(sys.argv[1]).read()
p0 = src.index("    if (tid == 256) {")
p1 = src.index("    return;\n  }", p0)
prod = src[p0:p1]
qa = prod.index("        tl::mbar_wait(tl::smem_addr(smem + 229672)")
la = prod.index("        const int lo = ")
qblock = prod[qa:la]
lb = prod.index("        for (int k1 = lo; k1 < hi; ++k1) {", la)
lohi = prod[la:lb]
le = prod.index("        ring += max(0, hi - lo);", lb)
loop = prod[lb:le]
first = loop.replace("for (int k1 = lo; k1 < hi; ++k1) {", "for (int k1 = lo; k1 < min(lo + 1, hi); ++k1) {", 1)
rest = loop.replace("for (int k1 = lo; k1 < hi; ++k1) {", "for (int k1 = lo + 1; k1 < hi; ++k1) {", 1)
prod = prod[:qa] + lohi + first + qblock + rest + prod[le:]
src = src[:p0] + prod + src[p1:]
open(sys.argv[2], "w").write(src)
