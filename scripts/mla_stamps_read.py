#!/usr/bin/env python3
"""Sum up the stamps of MLA's programs (mla_stamps_edit.py's layout), in µs:

    mla_stamps_read.py PREFIX.mla_decode.txt [PREFIX.mla_combine.txt]

From the split kernel's stamps: where its blocks' time goes, piece by piece, and a fit of each piece's
page loop against its page count (the intercept is the loop's ramp, the slope a page). With the
combine's: the gap between the kernels and the combine's span.
"""
import statistics as st
import sys

us = lambda ns: ns / 1000.0
v = [int(x) for x in open(sys.argv[1]).read().split()]
blocks = [v[i:i + 50] for i in range(0, min(len(v), 264 * 50), 50)]
producer = [x for x in v[264 * 50:] if x]
blocks = [b for b in blocks if b[0] and b[1]]
t0 = min(b[0] for b in blocks)
if producer:
    t0 = min(t0, min(producer))
pieces = []  # (block, k, start, q, loop start, loop end, end, pages)
for bi, b in enumerate(blocks):
    for k in range(8):
        s = b[2 + 6 * k: 8 + 6 * k]
        if s[0] and s[4]:
            pieces.append((bi, k, *s))
last = max(b[1] for b in blocks)
print(f"split kernel: blocks {len(blocks)}, pieces {len(pieces)}, first stamp to last consumer end {us(last - t0):.1f}")
ends = sorted(us(b[1] - t0) for b in blocks)
print(f"block ends: first {ends[0]:.1f}, median {st.median(ends):.1f}, last {ends[-1]:.1f}")


def row(name, xs):
    xs = [us(x) for x in xs]
    if xs:
        print(f"{name:38s} n {len(xs):4d}  mean {st.mean(xs):6.2f}  median {st.median(xs):6.2f}  min {min(xs):6.2f}  max {max(xs):6.2f}")


if producer:
    row("producer start (after the first)", [p - min(producer) for p in producer])
    row("consumers' start (after the first)", [b[0] - min(b[0] for b in blocks) for b in blocks])
first = [p for p in pieces if p[1] == 0]
later = [p for p in pieces if p[1] > 0]
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
xs = [p[7] for p in pieces if p[7] > 0]
ys = [us(p[5] - p[4]) for p in pieces if p[7] > 0]
if len(xs) > 2 and len(set(xs)) > 1:
    mx, my = st.mean(xs), st.mean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    a = my - b * mx
    print(f"page loop = {a:.2f} + {b:.3f} x pages (fit over {len(xs)} pieces, pages {min(xs)}-{max(xs)})")
    restart = a + st.mean([us(p[6] - p[5]) for p in pieces]) + st.mean([us(p[4] - p[3]) for p in pieces])
    if later and gaps:
        restart += st.mean([us(p[3] - p[2]) for p in later]) + st.mean(us(g) for g in gaps)
    print(f"a later piece beyond its pages (ramp, setup, epilogue, Q wait, gap): {restart:.2f} us = {restart / b:.1f} pages")
if len(sys.argv) > 2:
    c = [int(x) for x in open(sys.argv[2]).read().split()]
    cb = [(c[i], c[i + 1]) for i in range(0, len(c) - 1, 2) if c[i] and c[i + 1]]
    c0, c1 = min(s for s, _ in cb), max(e for _, e in cb)
    print(f"combine: blocks {len(cb)}, first start {us(c0 - last):.1f} after the split kernel's last consumer end, span {us(c1 - c0):.1f}")
    print(f"split kernel's first stamp to the combine's last end: {us(c1 - t0):.1f}")
