#!/usr/bin/env python3
"""Peers of tilego bench's rows suite (bench/rows_suite.go): RMSNorm,
LayerNorm and softmax over each row, in PyTorch eager and torch.compile,
and the device-to-device copy of the same tensor, which memory-bound
kernels are held to. Timed with triton's do_bench (L2 flushed before every
launch), as tilego bench times the suite. GB/s count the compulsory
traffic as tilego does: X read, Y written, and the per-column vectors.
Timed as tilego bench times the suite (bench.SuiteFlush): on rotated copies
of the inputs with no flush between launches (peers.py's Bench.rotated), so
no flush leaves dirty lines in the L2 for a memory-bound launch to write
back.

    python3 scripts/rows_peers.py [--quick] > peers.jsonl
    python3 scripts/rows_peers.py --table tilego.jsonl peers.jsonl

stdout: one JSON object per line (or the table); progress on stderr.
"""

import argparse
import json
import sys

SHAPES = [(4096, 1024), (4096, 4096), (4096, 16384), (32768, 1024), (16384, 8192)]  # bench.RowsShapes
KERNELS = ["rmsnorm", "layernorm", "softmax"]
VECTORS = {"rmsnorm": 1, "layernorm": 2, "softmax": 0}
EPS = 1e-6


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def peers(quick):
    import torch
    sys.path.insert(0, __import__("os").path.dirname(__file__))
    from peers import Bench
    F = torch.nn.functional
    bench = Bench(torch)
    fns = {
        "rmsnorm": lambda x, w, b: F.rms_norm(x, (x.shape[-1],), w, EPS),
        "layernorm": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, EPS),
        "softmax": lambda x, w, b: torch.softmax(x, dim=-1),
    }
    compiled = {k: torch.compile(f, dynamic=False) for k, f in fns.items()}
    dts = {"bf16": torch.bfloat16, "f32": torch.float32}
    for kernel in KERNELS:
        for dtn, dt in dts.items():
            for rows, cols in (SHAPES[1:2] if quick else SHAPES):
                esize = torch.empty(0, dtype=dt).element_size()
                nbytes = (2 * rows + VECTORS[kernel]) * cols * esize
                n = bench.copies(nbytes)
                xs = [torch.randn(rows, cols, device="cuda", dtype=dt) * 2 for _ in range(n)]
                ws = [torch.randn(cols, device="cuda", dtype=dt) for _ in range(n)]
                bs = [torch.randn(cols, device="cuda", dtype=dt) for _ in range(n)]
                ys = [torch.empty_like(x) for x in xs]
                shape = {"rows": rows, "cols": cols, "dtype": dtn}
                impls = {
                    "torch": [lambda i=i: fns[kernel](xs[i], ws[i], bs[i]) for i in range(n)],
                    "torch-compile": [lambda i=i: compiled[kernel](xs[i], ws[i], bs[i]) for i in range(n)],
                    "copy": [lambda i=i: ys[i].copy_(xs[i]) for i in range(n)],
                }
                for impl, fs in impls.items():
                    rec = {"suite": "rows", "kernel": kernel, "impl": impl, "shape": shape}
                    try:
                        for fn in fs:
                            fn()
                        torch.cuda.synchronize()
                        ms = bench.rotated(fs, warmup=3, repeats=60)
                        rec["ms"] = ms
                        rec["gbps"] = nbytes / (ms * 1e-3) / 1e9
                    except Exception as e:
                        rec["error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200])
                    log(json.dumps(rec))
                    print(json.dumps(rec), flush=True)
                del xs, ws, bs, ys


def table(paths):
    recs = []
    for p in paths:
        with open(p) as f:
            recs += [json.loads(l) for l in f if l.startswith("{")]
    key = lambda r: (r["kernel"], r["shape"]["dtype"], r["shape"]["rows"], r["shape"]["cols"])
    by = {}
    for r in recs:
        if r.get("suite") == "rows":
            by.setdefault(key(r), {})[r["impl"]] = r
    print("| kernel | dtype | rows×cols | tilego GB/s | config | copy GB/s | tilego/copy | torch | torch.compile | tilego/compile |")
    print("|---|---|---|--:|---|--:|--:|--:|--:|--:|")
    for k in sorted(by):
        d = by[k]
        g = lambda i: d.get(i, {}).get("gbps", 0) or 0
        t = d.get("tilego", {})
        cfg = " ".join("%s=%s" % kv for kv in (t.get("config") or {}).items()) or t.get("error", "-")[:40]
        ratio = lambda a, b: "%.2f" % (a / b) if a and b else "-"
        print("| %s | %s | %d×%d | %.0f | %s | %.0f | %s | %.0f | %.0f | %s |" % (
            k[0], k[1], k[2], k[3], g("tilego"), cfg, g("copy"), ratio(g("tilego"), g("copy")),
            g("torch"), g("torch-compile"), ratio(g("tilego"), g("torch-compile"))))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--table", nargs="+", metavar="JSONL")
    a = ap.parse_args()
    if a.table:
        table(a.table)
    else:
        peers(a.quick)
