#!/usr/bin/env python3
"""Peers of tilego bench's gemm-llm suite (bench/gemm_suite.go): cuBLAS
(torch.matmul) for the plain GEMMs; for the bias + tanh-GELU epilogue,
torch eager (cuBLAS, then the epilogue's kernels) and torch.compile of the
whole expression (cuBLAS followed by one fused epilogue kernel). bf16 in
and out, timed with triton's do_bench (an L2 flush before every launch) as
tilego bench times the suite.

    python3 scripts/gemm_peers.py > peers.jsonl
    python3 scripts/gemm_peers.py --table tilego.jsonl peers.jsonl
    python3 scripts/gemm_peers.py --fp8 > peers-fp8.jsonl   # gemm-fp8: torch._scaled_mm
    python3 scripts/gemm_peers.py --fp8 --table tilego-fp8.jsonl peers-fp8.jsonl

stdout: one JSON object per line (or the table); progress on stderr.
"""

import argparse
import json
import sys

# bench.GemmLLMPoints: (m, n, k, B stored N×K, epilogue)
POINTS = [
    (8192, 8192, 8192, False, ""),
    (4096, 14336, 4096, False, ""),
    (4096, 14336, 4096, True, ""),
    (14336, 4096, 4096, False, ""),
    (14336, 4096, 4096, True, ""),
    (2048, 2048, 2048, False, "bias+gelu"),
    (4096, 14336, 4096, False, "bias+gelu"),
]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def peers():
    import torch
    import triton.testing
    F = torch.nn.functional
    bench = lambda fn: float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))
    for m, n, k, tb, epi in POINTS:
        a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
        w = torch.randn(n, k, dtype=torch.bfloat16, device="cuda") / k ** 0.5
        b = w.t() if tb else w.t().contiguous()  # K×N, a view of N×K when transposed
        bias = torch.randn(n, dtype=torch.bfloat16, device="cuda")
        shape = {"m": m, "n": n, "k": k, "trans_a": False, "trans_b": tb, "dtype": "bf16", "out_dtype": "bf16"}
        if epi:
            shape["epilogue"] = epi
            eager = lambda: F.gelu(torch.matmul(a, b) + bias, approximate="tanh")
            fns = {"torch": eager, "torch-compile": torch.compile(lambda x, y, z: F.gelu(torch.matmul(x, y) + z, approximate="tanh"))}
            args = {"torch": (), "torch-compile": (a, b, bias)}
        else:
            fns = {"cublas": torch.matmul}
            args = {"cublas": (a, b)}
        want = None
        for impl, fn in fns.items():
            rec = {"suite": "gemm-llm", "kernel": "gemm", "impl": impl, "shape": shape}
            try:
                call = (lambda f=fn, x=args[impl]: f(*x))
                out = call()
                torch.cuda.synchronize()
                if want is None:
                    want = out.float()
                else:
                    rec["rel_diff"] = ((out.float() - want).abs().max() / want.abs().max()).item()
                ms = bench(call)
                rec["ms"] = ms
                rec["tflops"] = 2 * m * n * k / ms / 1e9
            except Exception as e:
                rec["error"] = ("%s: %s" % (type(e).__name__, e))[:300]
            print(json.dumps(rec), flush=True)
            log("%dx%dx%d tb=%s %s %s: %s" % (m, n, k, tb, epi, impl, "%.1f TFLOP/s" % rec["tflops"] if "tflops" in rec else rec.get("error")))
        del a, w, b, bias, want
        torch.cuda.empty_cache()


# bench.GemmFP8Points: (m, n, k, scaling), e4m3, B stored N×K, bf16 out
FP8_POINTS = [
    (8192, 8192, 8192, "tensor"),
    (4096, 14336, 4096, "tensor"),
    (14336, 4096, 4096, "tensor"),
    (8192, 8192, 8192, "row"),
]


def peers_fp8():
    """torch._scaled_mm on e4m3 A (M×K) and B (N×K, passed transposed:
    column-major K×N as it wants), bf16 out, scaled per tensor or per row
    of A and column of B."""
    import torch
    import triton.testing
    bench = lambda fn: float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))
    for m, n, k, scaling in FP8_POINTS:
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
        if scaling == "tensor":
            sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor(2.0, device="cuda")
            shape_s = {"epilogue": "scale_a_tensor+scale_b_tensor"}
        else:
            sa, sb = torch.rand(m, 1, device="cuda") + 0.5, torch.rand(1, n, device="cuda") + 0.5
            shape_s = {"epilogue": "scale_a_row+scale_b_col"}
        shape = {"m": m, "n": n, "k": k, "trans_a": False, "trans_b": True, "dtype": "f8e4m3", "out_dtype": "bf16", **shape_s}
        # use_fast_accum=False (the default) adds the tensor cores' partial
        # sums into f32 as tilego's Promote does; True keeps them in the
        # tensor cores' accumulator as tilego's default does.
        for impl, fast in (("torch-scaled-mm", False), ("torch-scaled-mm-fast", True)):
            rec = {"suite": "gemm-fp8", "kernel": "gemm", "impl": impl, "shape": shape}
            try:
                fn = lambda: torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, use_fast_accum=fast)
                fn()
                torch.cuda.synchronize()
                ms = bench(fn)
                rec["ms"], rec["tflops"] = ms, 2 * m * n * k / ms / 1e9
            except Exception as e:
                rec["error"] = ("%s: %s" % (type(e).__name__, e))[:300]
            print(json.dumps(rec), flush=True)
            log("fp8 %dx%dx%d %s %s: %s" % (m, n, k, scaling, impl, "%.1f TFLOP/s" % rec["tflops"] if "tflops" in rec else rec.get("error")))
        del a, b
        torch.cuda.empty_cache()


def records(paths):
    """The JSON records of the files at paths (lines that are objects)."""
    recs = []
    for p in paths:
        with open(p) as f:
            recs += [json.loads(l) for l in f if l.startswith("{")]
    return recs


def table_fp8(paths):
    recs = records(paths)
    by = {}
    for r in recs:
        if r.get("suite") == "gemm-fp8":
            s = r["shape"]
            by.setdefault((s["m"], s["n"], s["k"], s.get("epilogue", "")), {})[r["impl"]] = r
    print("| m×n×k | scales | tilego | ×_scaled_mm fast | tilego promote | ×_scaled_mm | config (tilego; promote) |")
    print("|---|---|--:|--:|--:|--:|---|")
    for key in sorted(by):
        d = by[key]
        g = lambda i: d.get(i, {}).get("tflops", 0) or 0
        ratio = lambda x, y: "%.2f" % (g(x) / g(y)) if g(x) and g(y) else "-"
        cfg = lambda i: " ".join("%s=%s" % kv for kv in (d.get(i, {}).get("config") or {}).items()) or d.get(i, {}).get("error", "-")[:40]
        print("| %d×%d×%d | %s | %.0f | %s | %.0f | %s | %s; %s |" % (key[0], key[1], key[2], key[3], g("tilego"),
              ratio("tilego", "torch-scaled-mm-fast"), g("tilego-promote"), ratio("tilego-promote", "torch-scaled-mm"),
              cfg("tilego"), cfg("tilego-promote")))


def table(paths):
    recs = records(paths)
    key = lambda s: (s.get("epilogue", ""), s["m"], s["n"], s["k"], bool(s.get("trans_b")))
    by = {}
    for r in recs:
        if r.get("suite") == "gemm-llm":
            by.setdefault(key(r["shape"]), {})[r["impl"]] = r
    print("| m×n×k | B | epilogue | tilego TFLOP/s | config | cuBLAS | torch | torch.compile | tilego/best peer |")
    print("|---|---|---|--:|---|--:|--:|--:|--:|")
    for k in sorted(by):
        d = by[k]
        g = lambda i: d.get(i, {}).get("tflops", 0) or 0
        t = d.get("tilego", {})
        cfg = " ".join("%s=%s" % kv for kv in (t.get("config") or {}).items()) or t.get("error", "-")[:40]
        best = max(g("cublas"), g("torch"), g("torch-compile"))
        cell = lambda v: "%.0f" % v if v else "-"
        print("| %d×%d×%d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            k[1], k[2], k[3], "N×K" if k[4] else "K×N", k[0] or "-", cell(g("tilego")), cfg,
            cell(g("cublas")), cell(g("torch")), cell(g("torch-compile")),
            "%.2f" % (g("tilego") / best) if best and g("tilego") else "-"))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", nargs="+", metavar="JSONL")
    ap.add_argument("--fp8", action="store_true", help="the gemm-fp8 suite's peer, torch._scaled_mm")
    a = ap.parse_args()
    if a.table:
        (table_fp8 if a.fp8 else table)(a.table)
    else:
        (peers_fp8 if a.fp8 else peers)()
