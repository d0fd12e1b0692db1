#!/usr/bin/env python3
"""Summarize where a kernel's warps wait, from Nsight Compute's source page:

    ncu -i REPORT.ncu-rep --page source --csv --print-source sass > sass.csv
    python3 scripts/ncu_stalls.py sass.csv [--top 20]

For each kernel in the file: the share of warp-state samples of each stall
reason over the whole kernel, then the instructions that hold the most
samples with their two largest reasons. ncu files a warpgroup's wait for
its wgmma (WARPGROUP.DEPBAR) under "barrier", so those instructions are
counted apart ("wgmma wait") from the named barriers (BAR.SYNC) and the
rest. Stdlib only.
"""

import argparse
import csv
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"


def sections(rows):
    """Yield (kernel name, header, data rows) for each kernel in the CSV."""
    name, header, data = None, None, []
    for r in rows:
        if r and r[0] == "Kernel Name":
            if header:
                yield name, header, data
            name, header, data = (r[1] if len(r) > 1 else "?"), None, []
        elif header is None and r and r[0] == "Address":
            header = r
        elif header is not None and r:
            data.append(r)
    if header:
        yield name, header, data


def num(s):
    try:
        return float(s.replace(",", ""))
    except (ValueError, AttributeError):
        return 0.0


def summarize(name, header, data, top):
    ix = {h: i for i, h in enumerate(header)}
    if SAMPLES not in ix:
        return ["%s: no %r column (was the report taken with --set full?)" % (name, SAMPLES)]
    reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    val = lambda r, k: num(r[ix[k]]) if ix[k] < len(r) else 0.0
    total = sum(val(r, SAMPLES) for r in data)
    if not total:
        return ["%s: no samples" % name]
    out = ["%s: %d instructions, %d samples" % (name, len(data), total)]
    by = {k: sum(val(r, k) for r in data) for k in reasons}
    src = lambda r: r[ix["Source"]].strip() if "Source" in ix else ""
    groups = {"wgmma wait": 0.0, "named barrier": 0.0}
    for r in data:
        s = src(r)
        if "WARPGROUP.DEPBAR" in s or "WGMMA.WAIT" in s.upper():
            groups["wgmma wait"] += val(r, SAMPLES)
        elif "BAR.SYNC" in s or "BAR.ARV" in s or "BAR.RED" in s:
            groups["named barrier"] += val(r, SAMPLES)
    out.append("  by instruction: " + ", ".join("%s %.1f%%" % (k, 100 * v / total) for k, v in groups.items()))
    out.append("  by reason: " + ", ".join("%s %.1f%%" % (k[6:], 100 * v / total)
                                          for k, v in sorted(by.items(), key=lambda x: -x[1])[:8] if v))
    for r in sorted(data, key=lambda r: -val(r, SAMPLES))[:top]:
        two = sorted(((val(r, k), k) for k in reasons), reverse=True)[:2]
        out.append("  %5.1f%%  %-60s %s" % (100 * val(r, SAMPLES) / total, src(r)[:60],
                                           " ".join("%s=%d" % (k[6:], v) for v, k in two if v)))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", help="ncu --page source --csv --print-source sass output")
    ap.add_argument("--top", type=int, default=20, help="instructions to list per kernel")
    a = ap.parse_args(argv)
    with open(a.csv, newline="") as f:
        rows = list(csv.reader(f))
    found = False
    for name, header, data in sections(rows):
        found = True
        print("\n".join(summarize(name, header, data, a.top)))
    if not found:
        print("no kernel sections in %s" % a.csv, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
