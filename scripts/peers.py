#!/usr/bin/env python3
"""Time tilego's peers (PyTorch SDPA backends, FlexAttention, cuBLAS) on the
shapes tilego's GPU suites benchmark (bench/suites.go).

stdout: one JSON object per line, nothing else; progress goes to stderr.

    python3 scripts/peers.py [--suite fa-sweep,extra,gemm,peak] [--quick]
                             [--impls sdpa-flash,sdpa-cudnn,sdpa-efficient,flex]
                             [--dry-run]

Every peer runs in its own try/except: a failure becomes a record with an
"error" field and the run goes on.
"""

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
import traceback
import warnings

ATTN_IMPLS = ["sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "flex"]
SUITES = ["fa-sweep", "extra", "gemm", "peak"]
CHECK_TOL = 0.05  # max abs diff against sdpa-flash
GEMM_REL_TOL = 0.02  # max abs diff / max abs value on a row sample, vs fp32


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def emit(rec):
    sys.stdout.write(json.dumps(rec) + "\n")
    sys.stdout.flush()


def err_text(e, extra=None):
    s = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")
    if extra:
        s += " [" + "; ".join(extra) + "]"
    return s[:600]


# ---------------------------------------------------------------- shapes

def attn_shape(batch, heads, heads_kv, seq, dim, causal):
    return {"batch": batch, "heads": heads, "heads_kv": heads_kv, "seq_q": seq, "seq_kv": seq,
            "dim": dim, "dim_v": dim, "causal": causal, "dtype": "bf16", "layout": "bshd"}


def fa_sweep_shapes(quick):
    seqs = [512, 4096] if quick else [512, 1024, 2048, 4096, 8192, 16384]
    for dim in [64, 128, 256]:
        for causal in [False, True]:
            for s in seqs:
                yield attn_shape(16384 // s, 2048 // dim, 2048 // dim, s, dim, causal)


def extra_shapes(quick):
    # --quick does not change "extra" (as on the Go side): three shapes only.
    yield attn_shape(2, 32, 8, 8192, 128, False)
    yield attn_shape(2, 32, 8, 8192, 128, True)
    yield attn_shape(1, 16, 16, 4096, 128, True)


GEMM_SHAPE = {"m": 8192, "n": 8192, "k": 8192, "dtype": "bf16"}


def attn_flops(s):
    f = 2.0 * s["batch"] * s["heads"] * s["seq_q"] * s["seq_kv"] * (s["dim"] + s["dim_v"])
    return f / 2 if s["causal"] else f


def gemm_flops(s):
    return 2.0 * s["m"] * s["n"] * s["k"]


def tflops(flops, ms):
    return flops / (ms * 1e-3) / 1e12


def short(s):
    if "m" in s:
        return "gemm %dx%dx%d" % (s["m"], s["n"], s["k"])
    return "d%d %s s%d b%dh%d/%d" % (s["dim"], "c" if s["causal"] else "-", s["seq_q"],
                                    s["batch"], s["heads"], s["heads_kv"])


# ---------------------------------------------------------------- timing

class Bench:
    def __init__(self, torch):
        self.torch = torch
        try:
            import triton.testing
            self.do_bench = triton.testing.do_bench
            log("timing with triton.testing.do_bench (median)")
        except Exception as e:  # fall back to CUDA events
            self.do_bench = None
            log("triton unavailable (%s); timing with CUDA events" % err_text(e))

    def __call__(self, fn):
        if self.do_bench is not None:
            return float(self.do_bench(fn, warmup=25, rep=100, return_mode="median"))
        torch = self.torch
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(50):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
        return statistics.median(times)


# ---------------------------------------------------------------- attention

class Attn:
    def __init__(self, torch, bench):
        self.torch = torch
        self.F = torch.nn.functional
        self.bench = bench
        from torch.nn.attention import SDPBackend, sdpa_kernel
        self.sdpa_kernel = sdpa_kernel
        self.backends = {"sdpa-flash": SDPBackend.FLASH_ATTENTION,
                         "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION,
                         "sdpa-efficient": SDPBackend.EFFICIENT_ATTENTION}
        self.flex = None
        self.flex_err = None

    def _flex(self):
        if self.flex is None and self.flex_err is None:
            try:
                from torch.nn.attention.flex_attention import create_block_mask, flex_attention
                self.create_block_mask = create_block_mask
                self.flex = self.torch.compile(flex_attention, dynamic=False, fullgraph=True)
            except Exception as e:
                self.flex_err = err_text(e)
        if self.flex_err:
            raise RuntimeError("flex_attention unavailable: " + self.flex_err)
        return self.flex

    def sdpa_call(self, q, k, v, causal, gqa):
        if gqa:
            return lambda: self.F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
        return lambda: self.F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def first_call(self, fn):
        """Run fn once; returns (out, None) or raises with captured warnings
        (SDPA explains why a backend was refused only in warnings)."""
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            try:
                out = fn()
                self.torch.cuda.synchronize()
                return out
            except Exception as e:
                msgs = [str(w.message).strip().splitlines()[0] for w in ws if str(w.message).strip()]
                e.tilego_warnings = msgs[-3:]
                raise

    def run_shape(self, suite, shape, impls):
        torch = self.torch
        B, H, HKV, S, D, DV = (shape[k] for k in ("batch", "heads", "heads_kv", "seq_q", "dim", "dim_v"))
        causal, gqa = shape["causal"], HKV != H
        flops = attn_flops(shape)
        # BSHD storage, passed as [B, H, S, D] views.
        q = torch.randn(B, S, H, D, dtype=torch.bfloat16, device="cuda").transpose(1, 2)
        k = torch.randn(B, S, HKV, D, dtype=torch.bfloat16, device="cuda").transpose(1, 2)
        v = torch.randn(B, S, HKV, DV, dtype=torch.bfloat16, device="cuda").transpose(1, 2)

        ref = None
        try:
            with self.sdpa_kernel([self.backends["sdpa-flash"]]):
                ref = self.first_call(self.sdpa_call(q, k, v, causal, gqa)).detach()
        except Exception as e:
            log("  no sdpa-flash reference: %s" % err_text(e))
            torch.cuda.empty_cache()

        for impl in impls:
            rec = {"suite": suite, "kernel": "flash-attention", "impl": impl, "shape": shape}
            notes = []
            t0 = time.time()
            try:
                if impl == "flex":
                    ctx = contextlib.nullcontext()
                else:
                    ctx = self.sdpa_kernel([self.backends[impl]])
                with ctx:
                    fn = self.make_fn(impl, q, k, v, causal, gqa, rec, notes)
                    out = self.first_call(fn)
                    if impl == "flex":
                        rec["compile_s"] = round(time.time() - t0, 1)
                    if ref is None:
                        notes.append("unchecked: no sdpa-flash reference")
                    elif impl != "sdpa-flash":
                        diff = (out.float() - ref.float()).abs().max().item()
                        rec["max_abs_diff"] = diff
                        if not diff < CHECK_TOL:
                            notes.append("mismatch: max abs diff %.3g vs sdpa-flash" % diff)
                    del out
                    ms = self.bench(fn)
                rec["ms"] = ms
                rec["tflops"] = tflops(flops, ms)
            except Exception as e:
                rec["error"] = err_text(e, getattr(e, "tilego_warnings", None))
                if os.environ.get("PEERS_TRACEBACK"):
                    traceback.print_exc()
            finally:
                fn = out = None
                torch.cuda.empty_cache()
            if notes:
                rec["note"] = "; ".join(notes)
            emit(rec)
            log("  %-15s %s" % (impl, ("%8.3f ms %6.1f TFLOP/s" % (rec["ms"], rec["tflops"]))
                                  if "ms" in rec else "ERROR " + rec["error"][:150])
                + ("  (" + rec["note"] + ")" if "note" in rec else "")
                + "  [%.1fs]" % (time.time() - t0))
        del q, k, v, ref
        torch.cuda.empty_cache()

    def make_fn(self, impl, q, k, v, causal, gqa, rec, notes):
        torch = self.torch
        if impl == "flex":
            flex = self._flex()
            # A fresh compile per shape: dynamic=False recompiles on every new
            # shape anyway, and this keeps dynamo's recompile limit away.
            torch._dynamo.reset()
            bm = None
            if causal:
                S, SKV = q.shape[2], k.shape[2]

                def causal_mask(b, h, qi, kvi):
                    return qi >= kvi
                bm = self.create_block_mask(causal_mask, None, None, S, SKV, device="cuda")
            if gqa:
                return lambda: flex(q, k, v, block_mask=bm, enable_gqa=True)
            return lambda: flex(q, k, v, block_mask=bm)
        fn = self.sdpa_call(q, k, v, causal, gqa)
        if not gqa:
            return fn
        # Some backends refuse enable_gqa: fall back to K/V expanded to all
        # query heads (same FLOPs, a little more K/V traffic), and say so.
        try:
            self.first_call(fn)
            return fn
        except Exception as e:
            rep = q.shape[1] // k.shape[1]
            ke = k.repeat_interleave(rep, dim=1)
            ve = v.repeat_interleave(rep, dim=1)
            notes.append("enable_gqa refused (%s); K/V expanded to %d heads"
                         % (err_text(e)[:160], q.shape[1]))
            return self.sdpa_call(q, ke, ve, causal, False)


# ---------------------------------------------------------------- gemm, peak

def run_gemm(torch, bench, want_gemm, want_peak):
    s = GEMM_SHAPE
    rec = {"suite": "gemm", "kernel": "gemm", "impl": "cublas", "shape": dict(s)}
    notes = []
    try:
        a = torch.randn(s["m"], s["k"], dtype=torch.bfloat16, device="cuda")
        b = torch.randn(s["k"], s["n"], dtype=torch.bfloat16, device="cuda")
        c = torch.empty(s["m"], s["n"], dtype=torch.bfloat16, device="cuda")
        fn = lambda: torch.matmul(a, b, out=c)
        fn()
        torch.cuda.synchronize()
        want = a[:128].float() @ b.float()
        rel = ((c[:128].float() - want).abs().max() / want.abs().max()).item()
        rec["rel_err"] = rel
        if not rel < GEMM_REL_TOL:
            notes.append("mismatch: rel err %.3g vs fp32 on 128 rows" % rel)
        del want
        ms = bench(fn)
        rec["ms"] = ms
        rec["tflops"] = tflops(gemm_flops(s), ms)
    except Exception as e:
        rec["error"] = err_text(e)
    finally:
        a = b = c = fn = None
        torch.cuda.empty_cache()
    if notes:
        rec["note"] = "; ".join(notes)
    if want_gemm:
        emit(rec)
    if want_peak:
        p = {"suite": "peak", "impl": "cublas-8192"}
        for key in ("ms", "tflops", "error", "note"):
            if key in rec:
                p[key] = rec[key]
        emit(p)
    log("  cublas 8192^3: " + ("%.3f ms %.1f TFLOP/s" % (rec["ms"], rec["tflops"]) if "ms" in rec
                               else "ERROR " + rec["error"]))


def run_copy(torch, bench):
    nbytes = 2 << 30
    rec = {"suite": "peak", "impl": "d2d-copy", "bytes": nbytes}
    try:
        src = torch.empty(nbytes, dtype=torch.uint8, device="cuda").fill_(7)
        dst = torch.empty_like(src)
        fn = lambda: dst.copy_(src)
        ms = bench(fn)
        rec["ms"] = ms
        rec["gbps"] = 2 * nbytes / (ms * 1e-3) / 1e9  # bytes read + written
    except Exception as e:
        rec["error"] = err_text(e)
    finally:
        src = dst = fn = None
        torch.cuda.empty_cache()
    emit(rec)
    log("  d2d copy 2 GiB: " + ("%.3f ms %.0f GB/s" % (rec["ms"], rec["gbps"]) if "ms" in rec
                                else "ERROR " + rec["error"]))


# ---------------------------------------------------------------- main

def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default=",".join(SUITES),
                    help="comma list of %s (default: all)" % ",".join(SUITES))
    ap.add_argument("--quick", action="store_true",
                    help="fa-sweep at seqlen 512 and 4096 only (smoke test)")
    ap.add_argument("--impls", default=os.environ.get("PEERS_IMPLS") or ",".join(ATTN_IMPLS),
                    help="attention peers to time, comma list (default: $PEERS_IMPLS or %s)" % ",".join(ATTN_IMPLS))
    ap.add_argument("--budget-s", type=float, default=float(os.environ.get("PEERS_BUDGET_S") or 0),
                    help="start no attention shape after this many seconds; the rest get an error record "
                         "(default: $PEERS_BUDGET_S or 0, no limit). Lines are flushed as they come, so a killed run keeps what it printed")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the shapes as records without timing (needs no GPU)")
    a = ap.parse_args(argv)
    a.suites = [s for s in a.suite.split(",") if s]
    for s in a.suites:
        if s not in SUITES:
            ap.error("unknown suite %r (want some of %s)" % (s, ",".join(SUITES)))
    a.impl_list = [i for i in a.impls.split(",") if i]
    for i in a.impl_list:
        if i not in ATTN_IMPLS:
            ap.error("unknown impl %r (want some of %s)" % (i, ",".join(ATTN_IMPLS)))
    return a


def attn_points(a):
    for suite, gen in (("fa-sweep", fa_sweep_shapes), ("extra", extra_shapes)):
        if suite in a.suites:
            for s in gen(a.quick):
                yield suite, s


def main(argv=None):
    a = parse_args(argv)
    if a.dry_run:
        for suite, s in attn_points(a):
            for impl in a.impl_list:
                emit({"suite": suite, "kernel": "flash-attention", "impl": impl, "shape": s,
                      "flops": attn_flops(s)})
        if "gemm" in a.suites:
            emit({"suite": "gemm", "kernel": "gemm", "impl": "cublas", "shape": GEMM_SHAPE,
                  "flops": gemm_flops(GEMM_SHAPE)})
        return 0

    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
        log("torch %s, CUDA %s, %s" % (torch.__version__, torch.version.cuda,
                                       torch.cuda.get_device_name()))
        torch.manual_seed(0)
        bench = Bench(torch)
    except Exception as e:
        # Nothing can run: one error record per point, so the table shows why.
        msg = err_text(e)
        log("cannot start: " + msg)
        for suite, s in attn_points(a):
            for impl in a.impl_list:
                emit({"suite": suite, "kernel": "flash-attention", "impl": impl, "shape": s, "error": msg})
        if "gemm" in a.suites:
            emit({"suite": "gemm", "kernel": "gemm", "impl": "cublas", "shape": GEMM_SHAPE, "error": msg})
        return 1

    t_start = time.time()
    if "gemm" in a.suites or "peak" in a.suites:
        log("[gemm/peak]")
        run_gemm(torch, bench, "gemm" in a.suites, "peak" in a.suites)
    if "peak" in a.suites:
        run_copy(torch, bench)

    attn = None
    try:
        attn = Attn(torch, bench)
    except Exception as e:
        msg = err_text(e)
        log("attention peers unavailable: " + msg)
    # SDPA backends first over every shape, FlexAttention (a compile per
    # shape, the slow part) in a second pass: a run cut short keeps the
    # SDPA numbers whole.
    passes = [[i for i in a.impl_list if i != "flex"], [i for i in a.impl_list if i == "flex"]]
    points = [(impls, suite, s) for impls in passes if impls for suite, s in attn_points(a)]
    for n, (impls, suite, s) in enumerate(points, 1):
        log("[%s %d/%d] %s %s  (%.0fs elapsed)" % (suite, n, len(points), short(s), ",".join(impls),
                                                  time.time() - t_start))
        if a.budget_s and time.time() - t_start > a.budget_s:
            for impl in impls:
                emit({"suite": suite, "kernel": "flash-attention", "impl": impl, "shape": s,
                      "error": "skipped: --budget-s %g exceeded" % a.budget_s})
            continue
        if attn is None:
            for impl in impls:
                emit({"suite": suite, "kernel": "flash-attention", "impl": impl, "shape": s, "error": msg})
            continue
        try:
            attn.run_shape(suite, s, impls)
        except Exception as e:  # e.g. out of memory creating the inputs
            m = err_text(e)
            log("  shape failed: " + m)
            for impl in impls:
                emit({"suite": suite, "kernel": "flash-attention", "impl": impl, "shape": s, "error": m})
            try:
                torch.cuda.empty_cache()
            except Exception:
                pass
    log("done in %.0fs" % (time.time() - t_start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
