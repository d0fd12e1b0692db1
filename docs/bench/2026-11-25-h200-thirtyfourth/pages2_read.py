#!/usr/bin/env python3
"""pages2_edit.py's stamps: per page of each block's first piece, the medians over blocks (µs), and for pages
2-15 together where the time of a page goes.

    pages2_read.py PREFIX.mla_decode.txt
"""
import statistics as st
import sys

v = [int(x) for x in open(sys.argv[1]).read().split()]
nb = 264
blocks = [b for b in range(nb) if v[b * 50] and v[b * 50 + 1]]
med = lambda xs: st.median(xs) if xs else float("nan")
base = 264 * 51


def s(b, i, k):
    return v[base + b * 128 + i * 8 + k]


names = ["issue", "at wait", "full", "S in", "handoff", "wg1 PV", "wg1 done"]
print(f"blocks {len(blocks)}; Q there (first piece) median {med([(v[b*50+3]-v[b*50])/1e3 for b in blocks]):.2f} µs from the consumers' start")
print("page " + " ".join(f"{n:>9s}" for n in names))
for i in range(16):
    row = []
    for k in range(7):
        xs = [(s(b, i, k) - v[b * 50]) / 1e3 for b in blocks if s(b, i, k)]
        row.append(med(xs))
    print(f"{i:4d} " + " ".join(f"{x:9.2f}" for x in row))
d = lambda a, b, lo=2: [(s(x, i, b) - s(x, i, a)) / 1e3 for x in blocks for i in range(lo, 16) if s(x, i, a) and s(x, i, b)]
nxt = [(s(x, i + 1, 4) - s(x, i, 4)) / 1e3 for x in blocks for i in range(2, 15) if s(x, i, 4) and s(x, i + 1, 4)]
issue_next = [(s(x, i + 2, 0) - s(x, i, 6)) / 1e3 for x in blocks for i in range(2, 14) if s(x, i, 6) and s(x, i + 2, 0)]
print("pages 2-15, medians (µs):")
for name, xs in [("handoff to handoff", nxt), ("issue to full (landed by then)", d(0, 2)), ("wg0 waiting for the page", d(1, 2)),
                 ("full to scores in", d(2, 3)), ("scores in to hand-off", d(3, 4)), ("hand-off to wg1's P·V issue", d(4, 5)),
                 ("wg1's P·V issue to done", d(5, 6)), ("hand-off to next page's arrival at wait", [(s(x, i + 1, 1) - s(x, i, 4)) / 1e3 for x in blocks for i in range(2, 15) if s(x, i, 4) and s(x, i + 1, 1)]),
                 ("wg1 done (page j) to issue of page j+2", issue_next)]:
    if xs:
        q = sorted(xs)
        print(f"  {name:42s} median {med(xs):6.3f}  p10 {q[len(q)//10]:6.3f}  p90 {q[9*len(q)//10]:6.3f}  n {len(xs)}")
e0 = base + 264 * 128
if len(v) >= e0 + 264 * 32 and any(v[e0:e0 + 264 * 32]):
    print("epilogue (epist_edit.py), medians over the first two pieces, µs from past the last hand-back:")
    steps = ["past 1st barrier", "past 2nd barrier", "scaled", "stores issued", "past last barrier"]
    for w in (0, 1):
        row = []
        for k in range(1, 6):
            xs = [(v[e0 + b * 32 + p * 16 + w * 8 + k] - v[e0 + b * 32 + p * 16 + w * 8]) / 1e3 for b in blocks for p in (0, 1)
                  if v[e0 + b * 32 + p * 16 + w * 8] and v[e0 + b * 32 + p * 16 + w * 8 + k]]
            row.append(f"{steps[k-1]} {med(xs):.2f}")
        print(f"  warpgroup {w}: " + ", ".join(row))
