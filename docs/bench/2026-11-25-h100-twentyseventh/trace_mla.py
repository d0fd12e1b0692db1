#!/usr/bin/env python3
"""Diagnosis only: instruments the split MLA kernel's emitted CUDA with clock reads.

  trace_mla.py instrument in.cu out.cu   # add the probes (anchored on the emitted text)
  trace_mla.py report log                 # summarize the TR lines of the last launch

Each block's threads 0 (warpgroup 0), 128 (warpgroup 1) and 256 (the producer)
keep clock64 stamps in a global array and print them when they finish; run the
instrumented file through TILEGO_SOURCE=mla_decode=out.cu. The stamps are:
  producer: per piece, when Q's slot freed (Q issued) and the first page issued;
  wg0, wg1: per piece, Q landed, first page landed, page loop done, epilogue done.
This is the second version (call 2); call 1's also summed wait times in
registers. Either way the stamped kernel ran a page in about 3.0 us against
1.9 unstamped (H100, 2026-11-25), so its times are upper bounds.
"""
import re
import sys
from collections import defaultdict

PRE = r'''
__device__ unsigned long long tl_tr[1024][48];
#define TR_ROW tl_tr[(blockIdx.y * gridDim.x + blockIdx.x) * 3 + threadIdx.x / 128]
__device__ __forceinline__ unsigned long long tl_gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
// Out of line, so that printf's frame stays out of the kernel's registers.
__device__ __noinline__ void tr_dump(int np) {
  unsigned long long* t = TR_ROW;
  t[42] = tl_gt(); t[43] = clock64();
  printf("TR %d %d %d %llu %llu %llu %llu 0 0 %d\n", blockIdx.x, blockIdx.y, threadIdx.x / 128, t[0], t[42], t[1], t[43], np);
  for (int p = 0; p < np && p < 8; ++p) printf("TP %d %d %d %d %llu %llu %llu %llu %llu\n", blockIdx.x, blockIdx.y, threadIdx.x / 128, p, t[2 + p * 5], t[3 + p * 5], t[4 + p * 5], t[5 + p * 5], t[6 + p * 5]);
}
'''

def sub(src, old, new, count=1):
    n = src.count(old)
    if n != count:
        sys.exit(f"anchor found {n} times, want {count}: {old!r}")
    return src.replace(old, new)

# Only threads 0, 128 and 256 stamp, straight to global memory: nothing
# stays live across the loops (extra registers made the kernel spill and
# run 1.6x slower in a first version that also summed wait times).
ME = 'threadIdx.x % 128 == 0'

def instrument(src):
    src = sub(src, 'extern "C" __global__', PRE + 'extern "C" __global__')
    src = sub(src, '  __syncthreads();\n  if (tid >= 256) {',
              '  __syncthreads();\n'
              f'  if ({ME}) {{ TR_ROW[0] = tl_gt(); TR_ROW[1] = clock64(); }}\n'
              '  if (tid >= 256) {')
    np = '(parts[(long long)(by) * 2 + (long long)(1)] - parts[(long long)(by) * 2])'
    # Producer: Q's slot free (Q issued), first page issued.
    q_empty = 'tl::mbar_wait(tl::smem_addr(smem + 229672) + 8 * ((k0 - 0) % 1), (((k0 - 0) / 1) & 1) ^ 1);'
    src = sub(src, q_empty, q_empty + f'\n        if ({ME} && k0 < 8) TR_ROW[2 + k0 * 5] = clock64();')
    ring_empty = 'tl::mbar_wait(tl::smem_addr(smem + 229648) + 8 * ((k1 - rb) % 2), (((k1 - rb) / 2) & 1) ^ 1);'
    src = sub(src, ring_empty, ring_empty + f'\n          if (k1 == lo && {ME} && k0 < 8) TR_ROW[3 + k0 * 5] = clock64();')
    src = sub(src, '    return;\n  }\n  tl::setmaxnreg_inc',
              f'    if ({ME}) tr_dump({np});\n    return;\n  }}\n  tl::setmaxnreg_inc')
    # Consumers: Q landed, first page landed (and the piece's pages), loop done, epilogue done.
    q_full = 'tl::mbar_wait(tl::smem_addr(smem + 229664) + 8 * ((k0 - 0) % 1), ((k0 - 0) / 1) & 1);'
    src = sub(src, q_full, q_full + f'\n    if ({ME} && k0 < 8) TR_ROW[2 + k0 * 5] = clock64();')
    full = 'tl::mbar_wait(tl::smem_addr(smem + 229632) + 8 * ((k1 - rb) % 2), ((k1 - rb) / 2) & 1);'
    src = sub(src, full, full + f'\n        if (k1 == lo && {ME} && k0 < 8) {{ TR_ROW[3 + k0 * 5] = clock64(); TR_ROW[6 + k0 * 5] = hi - lo; }}')
    last = 'tl::bar_sync(9, 256); // the last hand-back'
    src = sub(src, last, last + f'\n      if ({ME} && k0 < 8) TR_ROW[4 + k0 * 5] = clock64();')
    tail = '    tl::bar_sync(1, 256);\n  }\n}'
    src = sub(src, tail, f'    tl::bar_sync(1, 256);\n    if ({ME} && k0 < 8) TR_ROW[5 + k0 * 5] = clock64();\n  }}\n  if ({ME}) tr_dump({np});\n}}')
    return src

def report(path):
    heads, pieces = [], defaultdict(list)
    for line in open(path, errors='replace'):
        f = line.split()
        if f[:1] == ['TR']:
            heads.append([int(x) for x in f[1:]])
        elif f[:1] == ['TP']:
            pieces[tuple(int(x) for x in f[1:4])].append([int(x) for x in f[5:]])
    if not heads:
        sys.exit("no TR lines")
    # The launches: group the heads by start time (gaps over 50 us apart).
    heads.sort(key=lambda h: h[3])
    groups, cur = [], [heads[0]]
    for h in heads[1:]:
        if h[3] - cur[-1][3] > 50_000:
            groups.append(cur)
            cur = []
        cur.append(h)
    groups.append(cur)
    print(f"{len(groups)} launches traced; the last has {len(groups[-1])} thread records")
    g = groups[-1]
    t0 = min(h[3] for h in g)
    ends = sorted((h[4] - t0) / 1e3 for h in g if h[2] == 0)
    starts = sorted((h[3] - t0) / 1e3 for h in g if h[2] == 0)
    clk = sum((h[6] - h[5]) for h in g) / sum((h[4] - h[3]) for h in g)  # cycles per ns
    print(f"SM clock {clk:.3f} GHz; blocks start {starts[0]:.1f}-{starts[-1]:.1f} us, end {ends[0]:.1f} / median {ends[len(ends)//2]:.1f} / {ends[-1]:.1f} us")
    agg = defaultdict(list)
    for h in g:
        bx, by, role = h[0], h[1], h[2]
        ps = pieces[(bx, by, role)][-h[9]:] if h[9] else []
        us = lambda c: c / clk / 1e3
        agg[f"r{role} waits0 (us)"].append(us(h[7]))
        agg[f"r{role} waits1 (us)"].append(us(h[8]))
        agg[f"r{role} pieces"].append(h[9])
        agg[f"r{role} busy (us)"].append(us(h[6] - h[5]))
        prev = h[5]
        for i, p in enumerate(ps):
            if role == 0:
                agg["wg0 piece start -> Q landed"].append(us(p[0] - prev))
                agg["wg0 Q landed -> page 0 landed"].append(us(p[1] - p[0]))
                if p[4]:
                    agg["wg0 page loop per page"].append(us(p[2] - p[1]) / p[4])
                agg["wg0 page loop"].append(us(p[2] - p[1]))
                agg["wg0 epilogue"].append(us(p[3] - p[2]))
                agg["pages a piece"].append(p[4])
                if i + 1 < len(ps):
                    agg["wg0 loop done -> next page 0 landed"].append(us(ps[i + 1][1] - p[2]))
                    pr = pieces[(bx, by, 2)]
                    if len(pr) >= len(ps):
                        agg["producer next Q issued - wg0 loop done"].append(us(pr[-len(ps):][i + 1][0] - p[2]))
                        agg["producer next page 0 issued - wg0 loop done"].append(us(pr[-len(ps):][i + 1][1] - p[2]))
                prev = p[3]
            elif role == 1:
                agg["wg1 epilogue"].append(us(p[3] - p[2]))
            elif role == 2:
                agg["producer Q issued (after start)"].append(us(p[0] - h[5]))
                agg["producer Q issue -> page 0 issue"].append(us(p[1] - p[0]))
    for k in sorted(agg):
        v = sorted(agg[k])
        print(f"  {k:36s} n {len(v):4d}  min {v[0]:8.2f}  median {v[len(v)//2]:8.2f}  mean {sum(v)/len(v):8.2f}  max {v[-1]:8.2f}")
    # A block's time against its pages and pieces: least squares of
    # busy = a + b*pages + c*pieces over warpgroup 0's records.
    rows = []
    for h in g:
        if h[2] != 0 or not h[9]:
            continue
        ps = pieces[(h[0], h[1], 0)][-h[9]:]
        rows.append((1.0, float(sum(p[4] for p in ps)), float(h[9]), (h[6] - h[5]) / clk / 1e3))
    if len(rows) > 3 and len({r[1] for r in rows}) > 1 and len({r[2] for r in rows}) > 1:
        n = 3
        A = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
        y = [sum(r[i] * r[3] for r in rows) for i in range(n)]
        for i in range(n):  # Gauss-Jordan
            piv = A[i][i]
            for j in range(n):
                A[i][j] /= piv
            y[i] /= piv
            for k in range(n):
                if k != i:
                    f = A[k][i]
                    for j in range(n):
                        A[k][j] -= f * A[i][j]
                    y[k] -= f * y[i]
        res = [r[3] - (y[0] + y[1] * r[1] + y[2] * r[2]) for r in rows]
        print(f"fit: busy us = {y[0]:.2f} + {y[1]:.3f} * pages + {y[2]:.2f} * pieces (a piece = {y[2] / y[1]:.1f} pages); residual max {max(map(abs, res)):.2f} us")
    # Per-block timeline of the slowest wg0 record.
    worst = max((h for h in g if h[2] == 0), key=lambda h: h[4])
    print("slowest block", worst[:2], "end", (worst[4] - t0) / 1e3, "us; pieces:")
    for p in pieces[(worst[0], worst[1], 0)][-worst[9]:]:
        print("   ", [round((x - worst[5]) / clk / 1e3, 2) for x in p[:4]], "pages", p[4])

if __name__ == "__main__":
    if sys.argv[1] == "instrument":
        open(sys.argv[3], "w").write(instrument(open(sys.argv[2]).read()))
    else:
        report(sys.argv[2])
