#!/usr/bin/env python3
"""Peers of tilego bench's fa-mods and fa-mods-bwd suites
(bench/mods_suite.go): FlexAttention (torch.compile'd flex_attention with
create_block_mask) with the same score and mask modifiers, forward or
(--bwd) backward, bf16, 16 heads of 128, timed
with triton's do_bench (an L2 flush before every launch) as tilego bench
times the suite; the plain causal point also with SDPA's flash and cuDNN
backends.

    python3 scripts/mods_peers.py > peers.jsonl
    python3 scripts/mods_peers.py --table tilego.jsonl peers.jsonl
    python3 scripts/mods_peers.py --bwd > peers-bwd.jsonl    # and --bwd --table

stdout: one JSON object per line (or the table); progress on stderr.
"""

import argparse
import json
import math
import sys

HEADS, DIM = 16, 128


def doc_lens(n, k):  # bench.docLens
    total, left, out = k * (k + 1) // 2, n, []
    for i in range(k):
        l = left if i == k - 1 else n * (i + 1) // total
        left -= l
        out.append(l)
    return out


# bench.ModsPoints: (batch, seq, causal, mods name as tilego's shape prints it)
POINTS = [
    (1, 16384, True, "window=1023,0"),
    (1, 16384, True, "docs=8"),
    (4, 4096, True, "softcap=30"),
    (4, 4096, True, "alibi"),
    (4, 4096, False, "prefix=1024"),
    (16, 1024, True, ""),
]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def peers(bwd):
    """Times each point's peers, forward or (bwd) backward only: the
    gradients of Q, K and V from a forward run once, as tilego's
    flash-attention-bwd takes O and LSE."""
    import torch
    import triton.testing
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    from torch.nn.attention import SDPBackend, sdpa_kernel
    F = torch.nn.functional
    flex = torch.compile(flex_attention, dynamic=False)
    bench = lambda fn: float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))
    suite = "fa-mods-bwd" if bwd else "fa-mods"
    for batch, seq, causal, mods in POINTS:
        q, k, v = (torch.randn(batch, HEADS, seq, DIM, device="cuda", dtype=torch.bfloat16, requires_grad=bwd) for _ in range(3))
        slopes = torch.exp2(-8.0 * (torch.arange(HEADS, device="cuda") + 1) / HEADS)
        docs = torch.cat([torch.full((n,), i, device="cuda", dtype=torch.int32) for i, n in enumerate(doc_lens(seq, 8))])
        score_mod, mask = None, None
        causal_mask = (lambda b, h, qi, ki: ki <= qi) if causal else None
        if mods.startswith("window="):
            left = int(mods.split("=")[1].split(",")[0])
            mask = lambda b, h, qi, ki: (ki <= qi) & (qi - ki <= left)
        elif mods.startswith("docs="):
            mask = lambda b, h, qi, ki: (ki <= qi) & (docs[qi] == docs[ki])
        elif mods.startswith("softcap="):
            cap = float(mods.split("=")[1])
            score_mod = lambda s, b, h, qi, ki: cap * torch.tanh(s / cap)
            mask = causal_mask
        elif mods == "alibi":
            score_mod = lambda s, b, h, qi, ki: s - slopes[h] * (qi - ki).abs()
            mask = causal_mask
        elif mods.startswith("prefix="):
            prefix = int(mods.split("=")[1])
            mask = lambda b, h, qi, ki: (ki < prefix) | (ki <= qi)
        else:
            mask = causal_mask
        shape = {"batch": batch, "heads": HEADS, "seq_q": seq, "dim": DIM, "causal": causal, "mods": mods}
        impls = {}
        try:
            bm = create_block_mask(mask, None, None, seq, seq, device="cuda") if mask else None
            impls["flex"] = lambda: flex(q, k, v, score_mod=score_mod, block_mask=bm)
        except Exception as e:
            print(json.dumps({"suite": suite, "impl": "flex", "shape": shape, "error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200])}), flush=True)
        if not mods:
            for name, be in (("sdpa-flash", SDPBackend.FLASH_ATTENTION), ("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION)):
                def run(be=be):
                    with sdpa_kernel(be):
                        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                impls[name] = run
        if bwd:
            impls = {name: backward(torch, fn, (q, k, v)) for name, fn in impls.items()}
        for impl, fn in impls.items():
            rec = {"suite": suite, "kernel": "flash-attention-bwd" if bwd else "flash-attention", "impl": impl, "shape": shape}
            try:
                fn()
                torch.cuda.synchronize()
                rec["ms"] = bench(fn)
            except Exception as e:
                rec["error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200])
            log(json.dumps(rec))
            print(json.dumps(rec), flush=True)
        del q, k, v


def backward(torch, fwd, ins):
    """A function that runs only the backward of fwd's output (made once,
    on the first call) to ins, for a fixed random gradient."""
    state = {}

    def run():
        if not state:
            state["out"] = fwd()
            state["do"] = torch.randn_like(state["out"])
        return torch.autograd.grad(state["out"], ins, state["do"], retain_graph=True)
    return run


def table(paths, suite):
    recs = []
    for p in paths:
        with open(p) as f:
            recs += [json.loads(l) for l in f if l.startswith("{")]
    key = lambda s: (s["batch"], s["seq_q"], bool(s["causal"]), s.get("mods", ""))
    by = {}
    for r in recs:
        if r.get("suite") == suite:
            by.setdefault(key(r["shape"]), {})[r["impl"]] = r
    print("| batch×seq | causal | mods | tilego ms | config | FlexAttention ms | ×Flex | SDPA flash | cuDNN |")
    print("|---|---|---|--:|---|--:|--:|--:|--:|")
    for b, s, c, m in [(p[0], p[1], p[2], p[3]) for p in POINTS]:
        if (b, s, c, m) not in by:
            continue
        d = by[(b, s, c, m)]
        ms = lambda i: d.get(i, {}).get("ms")
        t, fl = ms("tilego"), ms("flex")
        cfg = " ".join("%s=%s" % kv for kv in (d.get("tilego", {}).get("config") or {}).items())
        fmt = lambda x: "%.3f" % x if x else "-"
        print("| %d×%d | %s | %s | %s | %s | %s | %s | %s | %s |" % (b, s, "yes" if c else "no", m or "-", fmt(t), cfg, fmt(fl),
              "%.2f" % (fl / t) if t and fl else "-", fmt(ms("sdpa-flash")), fmt(ms("sdpa-cudnn"))))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", nargs="+", metavar="JSONL")
    ap.add_argument("--bwd", action="store_true", help="the backward (suite fa-mods-bwd)")
    a = ap.parse_args()
    if a.table:
        table(a.table, "fa-mods-bwd" if a.bwd else "fa-mods")
    else:
        peers(a.bwd)
