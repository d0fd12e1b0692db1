#!/usr/bin/env python3
"""Time tilego's peers (PyTorch SDPA backends, FlexAttention, cuBLAS, plain
PyTorch MLA decoding and FlashMLA when installed) on the shapes tilego's GPU
suites benchmark (bench/suites.go).

stdout: one JSON object per line, nothing else; progress goes to stderr.

    python3 scripts/peers.py [--suite fa-sweep,fa-short,extra,gemm,mla,fa-tail,fa-bwd,peak] [--quick]
                             [--impls sdpa-flash,sdpa-cudnn,sdpa-efficient,flex]
                             [--dry-run]

fa-short is the sweep's causal points at 512 and 1k tokens, recorded as
fa-sweep (as tilego does). fa-tail has no peers (it compares tilego's split
path with its single program); it is accepted so that one suite list serves
both sides. mla always adds the peak suite's device-to-device copy
bandwidth, which issue 6 compares decoding's GB/s with. fa-bwd times
SDPA's backward alone (flash and cuDNN: dQ, dK, dV for a given dO, one
forward building the graph), FLOPs 2·B·H·Sq·Skv·(3D + 2Dv), halved when
causal, as tilego counts its backward.

Peers are timed with triton's do_bench (an L2 flush before every launch),
but mla's peers and the copy bandwidth, timed on rotated copies of their
inputs with no flush (Bench.rotated), as tilego bench times the mla suite.

Every peer runs in its own try/except: a failure becomes a record with an
"error" field and the run goes on.
"""

import argparse
import contextlib
import json
import math
import os
import re
import random
import statistics
import sys
import time
import traceback
import warnings

ATTN_IMPLS = ["sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "flex"]
SUITES = ["fa-sweep", "fa-short", "extra", "gemm", "mla", "fa-tail", "fa-bwd", "peak"]
BWD_IMPLS = ["sdpa-flash", "sdpa-cudnn"]
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


def fa_short_shapes(quick):
    # The causal sweep points at 512 and 1k tokens, whatever --quick says (as on the Go side).
    for s in fa_sweep_shapes(False):
        if s["causal"] and s["seq_q"] <= 1024:
            yield s


def extra_shapes(quick):
    # --quick does not change "extra" (as on the Go side): three shapes only.
    yield attn_shape(2, 32, 8, 8192, 128, False)
    yield attn_shape(2, 32, 8, 8192, 128, True)
    yield attn_shape(1, 16, 16, 4096, 128, True)


def fa_bwd_shapes(quick):
    # bench/suites.go's fa-bwd: 16k tokens, H = 2048/D, S 1k/4k/16k, d64 and d128, causal and not;
    # GQA 32:8 S4k d128 causal; d256 S4k both; --quick S4k d128 non-causal.
    if quick:
        yield attn_shape(4, 16, 16, 4096, 128, False)
        return
    for dim in [64, 128]:
        for causal in [False, True]:
            for s in [1024, 4096, 16384]:
                yield attn_shape(16384 // s, 2048 // dim, 2048 // dim, s, dim, causal)
    yield attn_shape(4, 32, 8, 4096, 128, True)
    yield attn_shape(4, 8, 8, 4096, 256, False)
    yield attn_shape(4, 8, 8, 4096, 256, True)


def bwd_flops(s):
    f = 2.0 * s["batch"] * s["heads"] * s["seq_q"] * s["seq_kv"] * (3 * s["dim"] + 2 * s["dim_v"])
    return f / 2 if s["causal"] else f


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

    def copies(self, input_bytes):
        """How many copies of input_bytes of inputs rotated() needs so that
        the others, touched since a copy's last launch, fill twice the L2:
        2 to 16, as bench.RotateCopies."""
        l2 = self.torch.cuda.get_device_properties(0).L2_cache_size
        n = 1 + (2 * l2 + max(input_bytes, 1) - 1) // max(input_bytes, 1)
        return min(max(n, 2), 16)

    def rotated(self, fns, warmup=5, repeats=50):
        """Median ms of fns[i % len(fns)], each over its own copy of the
        inputs, launched back to back with no flush between them (tilego
        bench --flush rotate): each launch finds its inputs cold, and the L2
        holds no dirty lines but the last launch's outputs. The mla suite
        and the copy it is held to are timed so (bench.SuiteFlush says
        why)."""
        torch = self.torch
        for _ in range(warmup):
            for fn in fns:
                fn()
        torch.cuda.synchronize()
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(repeats)]
        for i, (a, b) in enumerate(ev):
            a.record()
            fns[i % len(fns)]()
            b.record()
        torch.cuda.synchronize()
        return statistics.median(a.elapsed_time(b) for a, b in ev)


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


# ---------------------------------------------------------------- mla

MLA_DQK, MLA_DV, MLA_PAGE = 576, 512, 64


def mla_shapes(quick):
    """bench/split_suites.go's mla points: (batch, h_q, s_q, mean cache
    length), bf16: h_q 128, then the memory-bound h_q 16-64 at 8k."""
    if quick:
        pts = [(64, 128, 1, 2048), (128, 128, 1, 8192), (128, 128, 2, 4096), (128, 16, 1, 8192)]
    else:
        pts = [(b, 128, 1, m) for b in (64, 128) for m in (1024, 2048, 4096, 8192, 16384, 32768)]
        pts += [(64, 128, 2, 4096), (128, 128, 2, 4096)]
        pts += [(b, h, 1, 8192) for b in (64, 128) for h in (16, 32, 64)]
    for b, h, sq, mean in pts:
        yield {"batch": b, "heads": h, "seq_q": sq, "mean_kv": mean, "dtype": "bf16"}


def mla_lengths(s):
    """Cache lengths uniform within +-50% of the mean, a multiple of 64 moved
    up by one, as kernels.MLALengths draws them (seeded here by batch and
    mean too, but Go's generator is not reproduced: kv_sum says what ran)."""
    r = random.Random(s["batch"] * 1000003 + s["mean_kv"])
    lens = []
    for _ in range(s["batch"]):
        n = max(1, int(round(s["mean_kv"] * (0.5 + r.random()))))
        lens.append(n + 1 if n % MLA_PAGE == 0 else n)
    return lens


def mla_shape_rec(s, lens):
    return dict(s, kv_min=min(lens), kv_max=max(lens), kv_sum=sum(lens))


def mla_flops(s, kv_sum):
    """As FlashMLA counts: 2*s_q*h_q*sum(L)*(576+512), the causal mask not subtracted."""
    return 2.0 * s["seq_q"] * s["heads"] * kv_sum * (MLA_DQK + MLA_DV)


def mla_bytes(s, kv_sum):
    """Q, every cache row read once at 576 columns, and O; 2 bytes each."""
    rows = s["batch"] * s["seq_q"] * s["heads"]
    return 2.0 * (rows * MLA_DQK + kv_sum * MLA_DQK + rows * MLA_DV)


def mla_short(s):
    return "mla b%d s%d kv%d" % (s["batch"], s["seq_q"], s["mean_kv"])


class MLA:
    """Paged MLA decoding in plain PyTorch, and FlashMLA when it is installed.

    The cache is a pool of 64-row blocks of 576 columns (K; V is its first
    512), each request's blocks at shuffled pool ids in its block-table row.
    The torch peer gathers every request's blocks through the table (padded
    to the longest request), then runs the two batched matrix multiplies
    with the length and causal mask and an f32 softmax in between: what a
    model without a decoding kernel does."""

    def __init__(self, torch, bench):
        self.torch = torch
        self.bench = bench
        try:
            import flash_mla
            self.flash_mla = flash_mla
            log("flash_mla found: timing it as impl flashmla")
        except Exception:
            self.flash_mla = None

    def inputs(self, s, lens):
        torch = self.torch
        blocks = [(n + MLA_PAGE - 1) // MLA_PAGE for n in lens]
        total, width = sum(blocks), max(blocks)
        ids = torch.randperm(total).tolist()
        table = torch.zeros(len(lens), width, dtype=torch.int32)  # unused entries: block 0, masked
        at = 0
        for i, n in enumerate(blocks):
            table[i, :n] = torch.tensor(ids[at:at + n], dtype=torch.int32)
            at += n
        pool = torch.randn(total, MLA_PAGE, MLA_DQK, dtype=torch.bfloat16, device="cuda")
        q = torch.randn(s["batch"], s["seq_q"], s["heads"], MLA_DQK, dtype=torch.bfloat16, device="cuda")
        seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
        return q, pool, table.cuda(), seqlens

    def torch_fn(self, q, pool, table, seqlens):
        torch = self.torch
        b, sq, h, d = q.shape
        scale = 1.0 / math.sqrt(d)
        # Token t of a request of length L sees keys j <= L - sq + t.
        limit = seqlens[:, None] - sq + torch.arange(sq, device="cuda").repeat_interleave(h)[None, :]

        def fn():
            kv = pool[table.long()].view(b, -1, d)  # [b, width*64, 576]: the gather
            sc = torch.bmm(q.view(b, sq * h, d), kv.transpose(1, 2)).float() * scale
            j = torch.arange(kv.shape[1], device="cuda")
            sc.masked_fill_(j[None, None, :] > limit[:, :, None], float("-inf"))
            p = torch.softmax(sc, dim=-1).to(q.dtype)
            return torch.bmm(p, kv[:, :, :MLA_DV]).view(b, sq, h, MLA_DV)
        return fn

    def flash_fn(self, q, pool, table, seqlens):
        fm = self.flash_mla
        sq, h = q.shape[1], q.shape[2]
        meta, splits = fm.get_mla_metadata(seqlens, sq * h, 1)
        k = pool.view(pool.shape[0], MLA_PAGE, 1, MLA_DQK)
        return lambda: fm.flash_mla_with_kvcache(q, k, table, seqlens, MLA_DV, meta, splits, causal=True)[0]

    def reference_diff(self, out, q, pool, table, lens):
        """Max abs difference from float32 math on request 0's own blocks."""
        torch = self.torch
        sq, h, d = q.shape[1], q.shape[2], q.shape[3]
        L = lens[0]
        nb = (L + MLA_PAGE - 1) // MLA_PAGE
        kv = pool[table[0, :nb].long()].reshape(-1, d)[:L].float()
        sc = (q[0].reshape(sq * h, d).float() @ kv.T) / math.sqrt(d)
        tok = torch.arange(sq, device="cuda").repeat_interleave(h)
        sc.masked_fill_(torch.arange(L, device="cuda")[None, :] > (L - sq + tok)[:, None], float("-inf"))
        want = torch.softmax(sc, dim=-1) @ kv[:, :MLA_DV]
        return (out[0].reshape(sq * h, MLA_DV).float() - want).abs().max().item()

    def run_shape(self, suite, s):
        torch = self.torch
        lens = mla_lengths(s)
        shape = mla_shape_rec(s, lens)
        flops, nbytes = mla_flops(s, sum(lens)), mla_bytes(s, sum(lens))
        q, pool, table, seqlens = self.inputs(s, lens)
        # Timed on rotated copies of the inputs, as tilego bench times the
        # mla suite (Bench.rotated).
        sets = [(q, pool, table, seqlens)]
        for _ in range(self.bench.copies(q.nbytes + pool.nbytes) - 1):
            sets.append((q.clone(), pool.clone(), table.clone(), seqlens.clone()))
        impls = [("torch", self.torch_fn)] + ([("flashmla", self.flash_fn)] if self.flash_mla else [])
        for impl, make in impls:
            rec = {"suite": suite, "kernel": "mla-decode", "impl": impl, "shape": shape, "flush": "rotate"}
            t0 = time.time()
            fns = out = None
            try:
                fns = [make(*x) for x in sets]
                out = fns[0]()
                torch.cuda.synchronize()
                diff = self.reference_diff(out, q, pool, table, lens)
                rec["max_abs_diff"] = diff
                if not diff < CHECK_TOL:
                    rec["note"] = "mismatch: max abs diff %.3g vs f32 on request 0" % diff
                out = None
                ms = self.bench.rotated(fns)
                rec.update(ms=ms, tflops=tflops(flops, ms), gbps=nbytes / (ms * 1e-3) / 1e9)
            except Exception as e:
                rec["error"] = err_text(e)
                if os.environ.get("PEERS_TRACEBACK"):
                    traceback.print_exc()
            finally:
                fns = out = None
                torch.cuda.empty_cache()
            emit(rec)
            log("  %-15s %s  [%.1fs]" % (impl, ("%8.3f ms %6.1f TFLOP/s %6.0f GB/s" % (rec["ms"], rec["tflops"], rec["gbps"]))
                                         if "ms" in rec else "ERROR " + rec["error"][:150], time.time() - t0)
                + ("  (" + rec["note"] + ")" if "note" in rec else ""))
        del q, pool, table, seqlens, sets
        torch.cuda.empty_cache()


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
    """The device-to-device copy bandwidth, timed as the mla suite is (on
    rotated copies: impl d2d-copy, the one MLA's GB/s are held to) and, for
    the record, with do_bench's flush (d2d-copy-l2)."""
    nbytes = 2 << 30
    for impl in ("d2d-copy", "d2d-copy-l2"):
        rec = {"suite": "peak", "impl": impl, "bytes": nbytes, "flush": "rotate" if impl == "d2d-copy" else "l2"}
        pairs = []
        try:
            for _ in range(bench.copies(nbytes) if impl == "d2d-copy" else 1):
                src = torch.empty(nbytes, dtype=torch.uint8, device="cuda").fill_(7)
                pairs.append((src, torch.empty_like(src)))
            fns = [lambda s=s, d=d: d.copy_(s) for s, d in pairs]
            ms = bench.rotated(fns) if impl == "d2d-copy" else bench(fns[0])
            rec["ms"] = ms
            rec["gbps"] = 2 * nbytes / (ms * 1e-3) / 1e9  # bytes read + written
        except Exception as e:
            rec["error"] = err_text(e)
        finally:
            src = pairs = fns = None
            torch.cuda.empty_cache()
        emit(rec)
        log("  %s 2 GiB: " % impl + ("%.3f ms %.0f GB/s" % (rec["ms"], rec["gbps"]) if "ms" in rec
                                     else "ERROR " + rec["error"]))


# ---------------------------------------------------------------- main

def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default="fa-sweep,extra,gemm,peak",
                    help="comma list of %s (default: fa-sweep,extra,gemm,peak)" % ",".join(SUITES))
    ap.add_argument("--quick", action="store_true",
                    help="fewer points, as tilego bench --quick: fa-sweep at seqlen 512 and 4096, mla at 3 points")
    ap.add_argument("--impls", default=os.environ.get("PEERS_IMPLS") or ",".join(ATTN_IMPLS),
                    help="attention peers to time, comma list (default: $PEERS_IMPLS or %s)" % ",".join(ATTN_IMPLS))
    ap.add_argument("--budget-s", type=float, default=float(os.environ.get("PEERS_BUDGET_S") or 0),
                    help="start no attention or mla shape after this many seconds; the rest get an error record "
                         "(default: $PEERS_BUDGET_S or 0, no limit). Lines are flushed as they come, so a killed run keeps what it printed")
    ap.add_argument("--shape", default=os.environ.get("PEERS_SHAPE", ""),
                    help="time only the attention points whose shape, written as tilego bench --shape matches it "
                         "(\"batch=32 heads=16 ... causal=false ...\"), matches this regular expression "
                         "(default: $PEERS_SHAPE or all)")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the shapes as records without timing (needs no GPU)")
    a = ap.parse_args(argv)
    a.suites = [s for s in a.suite.split(",") if s]
    for s in a.suites:
        if s not in SUITES:
            ap.error("unknown suite %r (want some of %s)" % (s, ",".join(SUITES)))
    try:
        re.compile(a.shape)
    except re.error as e:
        ap.error("--shape %r: %s" % (a.shape, e))
    a.impl_list = [i for i in a.impls.split(",") if i]
    for i in a.impl_list:
        if i not in ATTN_IMPLS:
            ap.error("unknown impl %r (want some of %s)" % (i, ",".join(ATTN_IMPLS)))
    return a


def mla_points(a):
    return list(mla_shapes(a.quick)) if "mla" in a.suites else []


def run_mla(torch, bench, a, t_start):
    pts = mla_points(a)
    mla = None
    for n, s in enumerate(pts, 1):
        log("[mla %d/%d] %s  (%.0fs elapsed)" % (n, len(pts), mla_short(s), time.time() - t_start))
        rec = {"suite": "mla", "kernel": "mla-decode", "impl": "torch", "shape": s}
        if a.budget_s and time.time() - t_start > a.budget_s:
            emit(dict(rec, error="skipped: --budget-s %g exceeded" % a.budget_s))
            continue
        try:
            mla = mla or MLA(torch, bench)
            mla.run_shape("mla", s)
        except Exception as e:  # e.g. out of memory making the inputs
            log("  shape failed: " + err_text(e))
            emit(dict(rec, error=err_text(e)))
            torch.cuda.empty_cache()


def bwd_points(a):
    if "fa-bwd" in a.suites:
        for s in fa_bwd_shapes(a.quick):
            if not a.shape or re.search(a.shape, shape_text(s)):
                yield s


def run_bwd(torch, bench, shapes):
    """SDPA's backward at the given attention shapes (the fa-bwd points, or
    scripts/bwd_peers.py's one): the same Q, K, V and dO for each backend,
    its gradients compared with sdpa-flash's."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    F = torch.nn.functional
    backends = {"sdpa-flash": SDPBackend.FLASH_ATTENTION, "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION}
    for s in shapes:
        log("[fa-bwd] %s" % short(s))
        B, H, HKV, S, D, DV = (s[k] for k in ("batch", "heads", "heads_kv", "seq_q", "dim", "dim_v"))
        q, k, v = (torch.randn(B, S, h, d, dtype=torch.bfloat16, device="cuda").transpose(1, 2).requires_grad_()
                   for h, d in ((H, D), (HKV, D), (HKV, DV)))
        gqa = {"enable_gqa": True} if HKV != H else {}
        do = torch.randn(B, S, H, DV, dtype=torch.bfloat16, device="cuda").transpose(1, 2)
        ref = None
        for impl in BWD_IMPLS:
            rec = {"suite": "fa-bwd", "kernel": "flash-attention-bwd", "impl": impl, "shape": s}
            try:
                with sdpa_kernel([backends[impl]]):
                    out = F.scaled_dot_product_attention(q, k, v, is_causal=s["causal"], **gqa)
                    fn = lambda: torch.autograd.grad(out, (q, k, v), do, retain_graph=True)
                    g = fn()
                    torch.cuda.synchronize()
                    if ref is None:
                        ref = g
                    else:
                        diff = max((x.float() - y.float()).abs().max().item() for x, y in zip(g, ref))
                        rec["max_abs_diff"] = diff
                        if not diff < CHECK_TOL:
                            rec["note"] = "mismatch: max abs diff %.3g vs sdpa-flash" % diff
                    ms = bench(fn)
                rec["ms"], rec["tflops"] = ms, tflops(bwd_flops(s), ms)
            except Exception as e:
                rec["error"] = err_text(e)
            finally:
                out = fn = g = None
                torch.cuda.empty_cache()
            emit(rec)
            log("  %-15s %s" % (impl, ("%8.3f ms %6.1f TFLOP/s" % (rec["ms"], rec["tflops"]))
                                  if "ms" in rec else "ERROR " + rec["error"][:150]))
        del q, k, v, do, ref
        torch.cuda.empty_cache()


def shape_text(s):
    """A shape as tilego bench prints it, for --shape."""
    return " ".join("%s=%s" % (k, str(v).lower() if isinstance(v, bool) else v) for k, v in s.items())


def attn_points(a):
    seen = set()
    for suite, gen in (("fa-sweep", fa_sweep_shapes), ("fa-short", fa_short_shapes), ("extra", extra_shapes)):
        if suite in a.suites:
            for s in gen(a.quick):
                # fa-short's points are the sweep's (the Go side records them as fa-sweep)
                label = "fa-sweep" if suite == "fa-short" else suite
                key = (label, json.dumps(s, sort_keys=True))
                if a.shape and not re.search(a.shape, shape_text(s)):
                    continue
                if key not in seen:
                    seen.add(key)
                    yield label, s


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
        for s in mla_points(a):
            lens = mla_lengths(s)
            emit({"suite": "mla", "kernel": "mla-decode", "impl": "torch", "shape": mla_shape_rec(s, lens),
                  "flops": mla_flops(s, sum(lens)), "bytes": mla_bytes(s, sum(lens))})
        for s in bwd_points(a):
            for impl in BWD_IMPLS:
                emit({"suite": "fa-bwd", "kernel": "flash-attention-bwd", "impl": impl, "shape": s,
                      "flops": bwd_flops(s)})
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
        for s in mla_points(a):
            emit({"suite": "mla", "kernel": "mla-decode", "impl": "torch", "shape": s, "error": msg})
        for s in bwd_points(a):
            for impl in BWD_IMPLS:
                emit({"suite": "fa-bwd", "kernel": "flash-attention-bwd", "impl": impl, "shape": s, "error": msg})
        return 1

    t_start = time.time()
    if "gemm" in a.suites or "peak" in a.suites:
        log("[gemm/peak]")
        run_gemm(torch, bench, "gemm" in a.suites, "peak" in a.suites)
    if "peak" in a.suites or "mla" in a.suites:
        run_copy(torch, bench)  # mla's GB/s are compared with it
    run_mla(torch, bench, a, t_start)
    run_bwd(torch, bench, bwd_points(a))

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
