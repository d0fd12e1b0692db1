#!/usr/bin/env python3
"""Join tilego's benchmark records with the peers' (scripts/peers.py) and
print one table per suite: TFLOP/s of each implementation, tilego's ratio to
the reference peers, and tilego's correctness check.

    python3 scripts/table.py TILEGO.jsonl PEERS.jsonl [--md]

Records are matched on (suite, kernel, shape), the shape reduced to the keys
below; a record with impl "tilego" is tilego's, any other a peer's (so the
order of the files does not matter). Non-JSON lines are skipped. Stdlib only.
"""

import argparse
import json
import math
import sys

ATTN_KEYS = ("batch", "heads", "heads_kv", "seq_q", "seq_kv", "dim", "dim_v", "causal", "dtype", "layout")
GEMM_KEYS = ("m", "n", "k", "dtype")
SUITE_ORDER = ("fa-sweep", "extra", "gemm")
PEER_ORDER = ("sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "flex", "cublas")
SHORT = {"sdpa-flash": "flash", "sdpa-cudnn": "cudnn", "sdpa-efficient": "effic", "flex": "flex",
         "cublas": "cublas"}
# tilego's ratio is printed against these peers.
BASELINES = {"flash-attention": ("sdpa-flash", "sdpa-cudnn"), "gemm": ("cublas",)}


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
    s.setdefault("heads_kv", s.get("heads"))
    s.setdefault("seq_kv", s.get("seq_q"))
    s.setdefault("dim_v", s.get("dim"))
    return tuple((k, s.get(k)) for k in ATTN_KEYS)


def load(paths):
    recs = []
    for p in paths:
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


def suite_table(suite, points, md):
    keys = sorted(points, key=lambda k: (k[0], sort_key(k[1])))
    peers_seen = {i for p in points.values() for i in p if i != "tilego"}
    peers = [p for p in PEER_ORDER if p in peers_seen] + sorted(peers_seen - set(PEER_ORDER))
    kernels = []
    for kern, _ in keys:
        if kern not in kernels:
            kernels.append(kern)
    bases = []
    for kern in kernels:
        for b in BASELINES.get(kern, ()):
            if b not in bases:
                bases.append(b)
    head = ["suite", "shape", "tilego"] + [SHORT.get(p, p) for p in peers] + \
           ["t/" + SHORT.get(b, b) for b in bases] + ["ok"]
    rows, ratios, fails = [head], {b: [] for b in bases}, 0
    for key in keys:
        pts = points[key]
        t = pts.get("tilego")
        row = [suite, short_shape(key[1]), tf_txt(t) or "-"] + [tf_txt(pts.get(p)) for p in peers]
        for b in bases:
            p = pts.get(b)
            if good(t) and good(p):
                x = t["tflops"] / p["tflops"]
                ratios[b].append(x)
                row.append("%.2f" % x)
            else:
                row.append("")
        ok = ok_txt(t) or "-"
        fails += ok in ("FAIL", "err")
        rows.append(row + [ok])
    out = render(rows, md)
    summ = []
    for b in bases:
        xs = ratios[b]
        if xs:
            summ.append("t/%s min %.2f geo %.2f >=1: %d/%d" % (SHORT.get(b, b), min(xs), geo(xs),
                                                               sum(x >= 1.0 for x in xs), len(xs)))
        else:
            summ.append("t/%s n/a" % SHORT.get(b, b))
    line = "%s: %d shapes; %s" % (suite, len(keys), "; ".join(summ))
    if fails:
        line += "; tilego failed/err: %d" % fails
    out.append("")
    out.append(("**%s**" % line) if md else line)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", metavar="FILE.jsonl", help="TILEGO.jsonl PEERS.jsonl (any order)")
    ap.add_argument("--md", action="store_true", help="markdown tables")
    a = ap.parse_args(argv)
    suites, peak = build(load(a.files))
    out = []
    names = [s for s in SUITE_ORDER if s in suites] + sorted(set(suites) - set(SUITE_ORDER))
    for s in names:
        if out:
            out.append("")
        out += suite_table(s, suites[s], a.md)
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
