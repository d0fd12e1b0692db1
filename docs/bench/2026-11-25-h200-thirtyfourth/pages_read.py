#!/usr/bin/env python3
"""pages_edit.py's stamps, per page of the first piece: medians over blocks, in µs from the block's
consumers' start (and, last, from the earliest consumer start of any block).

    pages_read.py PREFIX.mla_decode.txt
"""
import statistics as st
import sys

v = [int(x) for x in open(sys.argv[1]).read().split()]
nb = 264
blocks = [b for b in range(nb) if v[b * 50] and v[b * 50 + 1]]
t00 = min(v[b * 50] for b in blocks)
med = lambda xs: st.median(xs) if xs else float("nan")
print(f"blocks {len(blocks)}; consumers' start after the first block's: median {med([(v[b*50]-t00)/1e3 for b in blocks]):.2f} max {max((v[b*50]-t00)/1e3 for b in blocks):.2f}")
print(f"producer's first stamp: median {med([(v[nb*50+b]-v[b*50])/1e3 for b in blocks]):.2f}; Q there: median {med([(v[b*50+3]-v[b*50])/1e3 for b in blocks]):.2f}")
print("page  issue   full  handoff  wg1done   (µs from the block's consumers' start; median)   handoff step")
prev = None
for i in range(16):
    cols = []
    for s in range(4):
        xs = [(v[nb * 51 + b * 64 + i * 4 + s] - v[b * 50]) / 1e3 for b in blocks if v[nb * 51 + b * 64 + i * 4 + s]]
        cols.append(med(xs))
    step = cols[2] - prev if prev is not None else float("nan")
    prev = cols[2]
    print(f"{i:4d} {cols[0]:6.2f} {cols[1]:6.2f} {cols[2]:8.2f} {cols[3]:8.2f}   n={len(xs)}   {step:6.2f}")
