#!/usr/bin/env python3
"""Compare two tilego benchmark records of the same suites, taken in one
device run: A (a base revision's binary, scripts/gpu-suite.sh's AB_REV)
against B (this tree's).

    python3 scripts/ab.py A.jsonl B.jsonl [--md]

Points are matched on (suite, kernel, impl, shape); each line gives both
times, B's speed over A's (> 1: B is faster), and the configs when the two
picked different ones. The last line is the geometric mean and the range.
Records without a time (failed checks, errors) are shown as such. Stdlib
only.
"""

import argparse
import json
import math
import sys

# Shape keys that differ between runs of the same point (they describe
# drawn lengths or a split count that may move with the code).
VOLATILE = {"splits"}


def load(path):
    recs = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if "suite" not in r or "shape" not in r:
                continue
            shape = tuple(sorted((k, v) for k, v in r["shape"].items() if k not in VOLATILE))
            recs[(r["suite"], r.get("kernel", ""), r.get("impl", "tilego"), shape)] = r
    return recs


def label(key):
    suite, _, impl, shape = key
    s = dict(shape)
    keep = [k for k in ("batch", "heads", "seq_q", "seq_kv", "mean_kv", "dim", "causal", "m", "n", "k") if k in s]
    return "%s %s %s" % (suite, impl, " ".join("%s=%s" % (k, s[k]) for k in keep))


def cfg(r):
    return " ".join("%s=%s" % kv for kv in sorted((r.get("config") or {}).items()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="A: the base revision's records")
    ap.add_argument("b", help="B: this tree's records")
    ap.add_argument("--md", action="store_true", help="a markdown table")
    args = ap.parse_args(argv)
    a, b = load(args.a), load(args.b)
    rows, ratios = [], []
    for key in sorted(set(a) | set(b), key=label):
        ra, rb = a.get(key), b.get(key)
        ta = ra.get("ms") if ra and not ra.get("error") else None
        tb = rb.get("ms") if rb and not rb.get("error") else None
        x = ""
        if ta and tb:
            ratios.append(ta / tb)
            x = "%.3f" % (ta / tb)
        note = ""
        if ra and rb and cfg(ra) != cfg(rb):
            note = "A: %s; B: %s" % (cfg(ra), cfg(rb))
        show = lambda r, t: ("%.4f" % t) if t else ("missing" if r is None else "error")
        rows.append([label(key), show(ra, ta), show(rb, tb), x, note])
    head = ["point", "A ms", "B ms", "B/A speed", "configs"]
    if args.md:
        print("| " + " | ".join(head) + " |")
        print("|---|--:|--:|--:|---|")
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        w = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
        for r in [head] + rows:
            print("  ".join(c.ljust(w[i]) if i in (0, 4) else c.rjust(w[i]) for i, c in enumerate(r)).rstrip())
    if ratios:
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print("\nB/A speed over %d points: geo %.3f, min %.3f, max %.3f; B faster at %d" % (
            len(ratios), geo, min(ratios), max(ratios), sum(x > 1 for x in ratios)))
    else:
        print("\nno point timed on both sides", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
