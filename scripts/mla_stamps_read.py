#!/usr/bin/env python3
"""Summarize MLA split-kernel stamps (mla_stamps_edit.py's layout) from a TILEGO_STAMPS file, in µs."""
import statistics as st
import sys

v = [int(x) for x in open(sys.argv[1]).read().split()]
blocks = [v[i:i + 50] for i in range(0, len(v), 50)]
blocks = [b for b in blocks if b[0] and b[1]]
t0 = min(b[0] for b in blocks)
us = lambda ns: ns / 1000.0
pieces = []  # (block, k, start, q, loop0, loop1, epi, n)
for bi, b in enumerate(blocks):
    for k in range(8):
        s = b[2 + 6 * k: 8 + 6 * k]
        if s[0] == 0 or s[4] == 0:
            continue
        pieces.append((bi, k, *s))
print(f"blocks {len(blocks)}, pieces {len(pieces)}, kernel span (consumers' first start to last end) {us(max(b[1] for b in blocks) - t0):.1f}")
ends = sorted(us(b[1] - t0) for b in blocks)
print(f"block ends: first {ends[0]:.1f}, median {st.median(ends):.1f}, last {ends[-1]:.1f}")
first = [p for p in pieces if p[1] == 0]
later = [p for p in pieces if p[1] > 0]
def row(name, xs):
    xs = [us(x) for x in xs]
    if xs:
        print(f"{name:38s} n {len(xs):4d}  mean {st.mean(xs):6.2f}  median {st.median(xs):6.2f}  min {min(xs):6.2f}  max {max(xs):6.2f}")
row("first piece: block start to Q there", [p[3] - blocks[p[0]][0] for p in first])
row("later piece: start to Q there", [p[3] - p[2] for p in later])
row("setup (Q there to page loop)", [p[4] - p[3] for p in pieces])
row("epilogue (loop end to piece end)", [p[6] - p[5] for p in pieces])
gaps = []
for p in later:
    prev = [q for q in pieces if q[0] == p[0] and q[1] == p[1] - 1]
    if prev:
        gaps.append(p[2] - prev[0][6])
row("between pieces (end to next start)", gaps)
# page loop time against its page count: intercept = a piece's ramp, slope = a page
xs = [p[7] for p in pieces if p[7] > 0]
ys = [us(p[5] - p[4]) for p in pieces if p[7] > 0]
if len(xs) > 2:
    mx, my = st.mean(xs), st.mean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    a = my - b * mx
    print(f"page loop = {a:.2f} + {b:.3f} x pages (fit over {len(xs)} pieces, pages {min(xs)}-{max(xs)})")
    restart = a + st.mean([us(p[6] - p[5]) for p in pieces]) + st.mean([us(p[4] - p[3]) for p in pieces])
    if later and gaps:
        restart += st.mean([us(p[3] - p[2]) for p in later]) + st.mean(us(g) for g in gaps)
    print(f"a later piece beyond its pages (ramp, setup, epilogue, Q wait, gap): {restart:.2f} us = {restart / b:.1f} pages")
