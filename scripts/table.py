#!/usr/bin/env python3
"""Join tilego's benchmark records with the peers' (scripts/peers.py) and
print one table per suite: TFLOP/s of each implementation, tilego's ratio to
the reference peers, and tilego's correctness check.

    python3 scripts/table.py TILEGO.jsonl PEERS.jsonl [--md]

Records are matched on (suite, kernel, shape), the shape reduced to the keys
below; a record with impl "tilego" or "tilego-split" is tilego's, any other a
peer's (so the order of the files does not matter). Non-JSON lines are
skipped. Stdlib only.

Suites with a split path (mla, fa-tail) add its TFLOP/s ("split"), its
split count ("n"; 1: the cost model declined, so it is the single program
again) and its speedup over the single program ("s/1"); the ratios to the
peers are then of the faster of the two. Suites whose records carry GB/s
(mla) add tilego's GB/s and its fraction of the peak suite's
device-to-device copy bandwidth ("/copy"). The summary judges them as
issue 6 does: memory-bound decoding (h_q*s_q < 128) by its fraction of the
copy bandwidth (>= 0.85), compute-bound (h_q*s_q >= 128) by TFLOP/s
(>= 600). "ok" is tilego's check, "ok/FAIL" when the
single program's and the split path's differ (in that order).
"""

import argparse
import json
import math
import os
import sys

ATTN_KEYS = ("batch", "heads", "heads_kv", "seq_q", "seq_kv", "dim", "dim_v", "causal", "dtype", "layout")
GEMM_KEYS = ("m", "n", "k", "dtype")
# MLA decoding: the peers draw their own cache lengths around the mean (kv_sum differs).
MLA_KEYS = ("batch", "heads", "seq_q", "mean_kv", "dtype")
SUITE_ORDER = ("fa-sweep", "extra", "gemm", "mla", "fa-tail", "fa-bwd")
TILEGO = ("tilego", "tilego-split")
PEER_ORDER = ("sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "flex", "cublas", "flashmla", "torch")
SHORT = {"sdpa-flash": "flash", "sdpa-cudnn": "cudnn", "sdpa-efficient": "effic", "flex": "flex",
         "cublas": "cublas", "flashmla": "flashmla", "torch": "torch"}
# tilego's ratio is printed against these peers.
BASELINES = {"flash-attention": ("sdpa-flash", "sdpa-cudnn"), "flash-attention-bwd": ("sdpa-flash", "sdpa-cudnn"),
             "gemm": ("cublas",),
             "mla-decode": ("flashmla", "torch")}
COPY_GOAL = 0.85  # issue 6: memory-bound decoding at >= 85% of the d2d copy bandwidth
TFLOPS_GOAL = 600  # issue 6: compute-bound decoding (h_q*s_q >= 128) at >= 600 TFLOP/s


def norm_val(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        t = v.strip().lower()
        if t in ("true", "false"):
            return t == "true"
        try:
            return int(t)
        except ValueError:
            return v.strip()
    return v


def norm_shape(kernel, shape):
    """The join key: the listed keys only, defaults as the Go side fills them."""
    s = {k: norm_val(v) for k, v in (shape or {}).items()}
    if kernel == "gemm" or ("m" in s and "heads" not in s):
        return tuple((k, s.get(k)) for k in GEMM_KEYS)
    if kernel == "mla-decode" or "mean_kv" in s:
        return tuple((k, s.get(k)) for k in MLA_KEYS)
    s.setdefault("heads_kv", s.get("heads"))
    s.setdefault("seq_kv", s.get("seq_q"))
    s.setdefault("dim_v", s.get("dim"))
    return tuple((k, s.get(k)) for k in ATTN_KEYS)


def load(paths):
    recs = []
    for p in paths:
        if not os.path.exists(p):  # e.g. tilego bench failed before writing: show the rest
            print("%s: missing, skipped" % p, file=sys.stderr)
            continue
        with open(p) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    r = json.loads(line)
                except ValueError as e:
                    print("%s:%d: skipped (%s)" % (p, n, e), file=sys.stderr)
                    continue
                if isinstance(r, dict):
                    recs.append(r)
    return recs


def good(r):
    return r is not None and not r.get("error") and isinstance(r.get("tflops"), (int, float)) and r["tflops"] > 0


def better(old, new):
    """Of two records for one point keep the one that ran, then the fastest."""
    if old is None:
        return new
    if good(new) and (not good(old) or new["tflops"] > old["tflops"]):
        return new
    return old


def seq_txt(n):
    return "%dk" % (n // 1024) if n and n % 1024 == 0 else str(n)


def short_shape(key):
    s = dict(key)
    if "mean_kv" in s:
        out = "b%s s%s kv%s" % (s["batch"], s["seq_q"], seq_txt(s["mean_kv"]))
        if s.get("heads") != 128:
            out += " h%s" % s["heads"]
        return out if s.get("dtype") in (None, "bf16") else out + " " + str(s["dtype"])
    if "m" in s:
        dims = "x".join(seq_txt(s[k]) for k in ("m", "n", "k"))
        return dims if s.get("dtype") in (None, "bf16") else dims + " " + str(s["dtype"])
    d = "d%s" % s["dim"] if s["dim_v"] == s["dim"] else "d%s/%s" % (s["dim"], s["dim_v"])
    sq = seq_txt(s["seq_q"]) if s["seq_kv"] == s["seq_q"] else "%s/%s" % (seq_txt(s["seq_q"]), seq_txt(s["seq_kv"]))
    bh = "b%sh%s" % (s["batch"], s["heads"]) + ("" if s["heads_kv"] == s["heads"] else "/%s" % s["heads_kv"])
    out = "%s %s %s %s" % (d, "c" if s["causal"] else "-", sq, bh)
    if s.get("dtype") not in (None, "bf16"):
        out += " " + str(s["dtype"])
    if s.get("layout") not in (None, "bshd"):
        out += " " + str(s["layout"])
    return out


def sort_key(key):
    s = dict(key)
    if "mean_kv" in s:
        return (2, s["seq_q"] or 0, s["batch"] or 0, s["mean_kv"] or 0, s["heads"] or 0)
    if "m" in s:
        return (1, s["m"] or 0, s["n"] or 0, s["k"] or 0)
    return (0, s["dim"] or 0, bool(s["causal"]), s["seq_q"] or 0, s["batch"] or 0, s["heads_kv"] or 0)


def tf_txt(r):
    if r is None:
        return ""
    if not good(r):
        return "err"
    t = r["tflops"]
    txt = "%.0f" % t if t >= 100 else "%.1f" % t
    if r.get("note") and "mismatch" in str(r["note"]):
        txt += "!"
    return txt


def ok_txt(r):
    if r is None:
        return ""
    if r.get("error") and not good(r):
        return "err"
    c = r.get("check")
    if not isinstance(c, dict) or "ok" not in c:
        return "?"
    if not c["ok"]:
        return "FAIL"
    return "ok"


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def fastest(*recs):
    """The good record with the most TFLOP/s, or None."""
    rs = [r for r in recs if good(r)]
    return max(rs, key=lambda r: r["tflops"]) if rs else None


def span(xs):
    return "%.2f-%.2f" % (min(xs), max(xs)) if xs else "n/a"


def build(recs):
    """suite -> {key -> {impl -> record}}, and the peak records."""
    suites, peak = {}, {}
    for r in recs:
        suite = r.get("suite")
        if suite == "peak":
            impl = r.get("impl", "?")
            if impl not in peak or not r.get("error"):
                peak[impl] = r
            continue
        if not suite or "shape" not in r:
            continue
        kernel = r.get("kernel") or ("gemm" if "m" in (r.get("shape") or {}) else "flash-attention")
        key = (kernel, norm_shape(kernel, r["shape"]))
        impl = r.get("impl") or "tilego"
        pts = suites.setdefault(suite, {}).setdefault(key, {})
        pts[impl] = better(pts.get(impl), r)
    return suites, peak


def render(rows, md):
    if md:
        out = ["| " + " | ".join(rows[0]) + " |", "|" + "|".join("---" if i < 2 else "--:" for i in range(len(rows[0]))) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        return out
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w[i]) if i < 2 else c.rjust(w[i]) for i, c in enumerate(r)).rstrip() for r in rows]


def suite_table(suite, points, md, copy_gbps=None):
    keys = sorted(points, key=lambda k: (k[0], sort_key(k[1])))
    peers_seen = {i for p in points.values() for i in p if i not in TILEGO}
    peers = [p for p in PEER_ORDER if p in peers_seen] + sorted(peers_seen - set(PEER_ORDER))
    split = any("tilego-split" in p for p in points.values())
    gbps = any(good(r) and r.get("gbps") for p in points.values() for i, r in p.items() if i in TILEGO)
    kernels = []
    for kern, _ in keys:
        if kern not in kernels:
            kernels.append(kern)
    bases = []
    for kern in kernels:
        for b in BASELINES.get(kern, ()):
            if b in peers and b not in bases:
                bases.append(b)
    head = ["suite", "shape", "tilego"] + (["split", "n", "s/1"] if split else []) + \
           [SHORT.get(p, p) for p in peers] + ["t/" + SHORT.get(b, b) for b in bases] + \
           (["GB/s"] + (["/copy"] if copy_gbps else []) if gbps else []) + ["ok"]
    rows, ratios, fails = [head], {b: [] for b in bases}, 0
    speedups, declined, copies, compute = [], [], [], []
    for key in keys:
        pts = points[key]
        t, sp = pts.get("tilego"), pts.get("tilego-split")
        best = fastest(t, sp)
        row = [suite, short_shape(key[1]), tf_txt(t) or "-"]
        if split:
            n = sp.get("splits") if sp else None
            row += [tf_txt(sp) or "-", str(n) if n else ""]
            if good(t) and good(sp):
                x = sp["tflops"] / t["tflops"]
                (speedups if (n or 1) > 1 else declined).append(x)
                row.append("%.2f" % x)
            else:
                row.append("")
        row += [tf_txt(pts.get(p)) for p in peers]
        for b in bases:
            p = pts.get(b)
            if best and good(p):
                x = best["tflops"] / p["tflops"]
                ratios[b].append(x)
                row.append("%.2f" % x)
            else:
                row.append("")
        if gbps:
            g = best.get("gbps") if best else None
            row.append("%.0f" % g if g else "")
            sh = dict(key[1])
            if (sh.get("heads") or 0) * (sh.get("seq_q") or 0) >= 128:
                if best:
                    compute.append(best["tflops"])
            elif copy_gbps and g:
                copies.append(g / copy_gbps)
            if copy_gbps:
                row.append("%.2f" % (g / copy_gbps) if g else "")
        oks = [ok_txt(r) for r in (t, sp) if r is not None]  # the single program's, then the split path's
        fails += sum(o in ("FAIL", "err") for o in oks)
        rows.append(row + [(oks[0] if len(set(oks)) == 1 else "/".join(oks)) if oks else "-"])
    out = render(rows, md)
    summ = []
    for b in bases:
        xs = ratios[b]
        if xs:
            summ.append("t/%s min %.2f geo %.2f >=1: %d/%d" % (SHORT.get(b, b), min(xs), geo(xs),
                                                               sum(x >= 1.0 for x in xs), len(xs)))
        else:
            summ.append("t/%s n/a" % SHORT.get(b, b))
    if split:
        if speedups:
            summ.append("split/1 where split: min %.2f geo %.2f faster: %d/%d" % (
                min(speedups), geo(speedups), sum(x > 1.0 for x in speedups), len(speedups)))
        if declined:
            summ.append("declined (n=1): %s over %d" % (span(declined), len(declined)))
    if copies:
        summ.append("memory-bound (h*s_q < 128) of copy %s, >=%.2f: %d/%d" % (
            span(copies), COPY_GOAL, sum(x >= COPY_GOAL for x in copies), len(copies)))
    if compute:
        summ.append("compute-bound TFLOP/s %.0f-%.0f, >=%d: %d/%d" % (
            min(compute), max(compute), TFLOPS_GOAL, sum(x >= TFLOPS_GOAL for x in compute), len(compute)))
    line = "%s: %d shapes; %s" % (suite, len(keys), "; ".join(summ) or "no peers")
    if fails:
        line += "; tilego failed/err: %d" % fails
    out.append("")
    out.append(("**%s**" % line) if md else line)
    slow = []
    for key in keys:
        for impl in TILEGO:
            d = drift(points[key].get(impl))
            if d:
                slow.append("%s %s %.3f -> %.3f ms" % (short_shape(key[1]), impl, d[0], d[1]))
    if slow:
        note = "launches slowed during timing (mean of the first 5 -> the last 5; the GPU's clock or power state): " + "; ".join(slow)
        out.append(("*%s*" % note) if md else note)
    return out


def drift(r, n=5, limit=1.05):
    """(first, last) mean launch times of r's times_ms when the last n ran slower than the first n by more
    than limit, else None."""
    t = (r or {}).get("times_ms") or []
    if len(t) < 2 * n:
        return None
    a, b = sum(t[:n]) / n, sum(t[-n:]) / n
    return (a, b) if b > a * limit else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", metavar="FILE.jsonl", help="TILEGO.jsonl PEERS.jsonl (any order)")
    ap.add_argument("--md", action="store_true", help="markdown tables")
    a = ap.parse_args(argv)
    suites, peak = build(load(a.files))
    copy = peak.get("d2d-copy") or {}
    copy_gbps = copy.get("gbps") if not copy.get("error") else None
    out = []
    names = [s for s in SUITE_ORDER if s in suites] + sorted(set(suites) - set(SUITE_ORDER))
    for s in names:
        if out:
            out.append("")
        out += suite_table(s, suites[s], a.md, copy_gbps)
    if peak:
        parts = []
        for impl, r in sorted(peak.items()):
            if r.get("error"):
                parts.append("%s err" % impl)
            elif "gbps" in r:
                parts.append("%s %.0f GB/s" % (impl, r["gbps"]))
            elif "tflops" in r:
                parts.append("%s %.0f TFLOP/s" % (impl, r["tflops"]))
        out += ["", ("peak: " if not a.md else "**peak**: ") + ", ".join(parts)]
    errs = {}
    for pts in suites.values():
        for p in pts.values():
            for impl, r in p.items():
                if not good(r) and r.get("error"):
                    e = (impl, str(r["error"])[:90])
                    errs[e] = errs.get(e, 0) + 1
    if errs:
        out += ["", "errors:" if not a.md else "**errors**:"]
        for (impl, e), n in sorted(errs.items()):
            out.append(("- " if a.md else "  ") + "%s x%d: %s" % (impl, n, e))
    if not names:
        out.append("no records")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
