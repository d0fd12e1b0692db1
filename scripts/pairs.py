#!/usr/bin/env python3
"""Time variants of one `tilego run ... --json` point in alternating
rounds and compare each with the first, round by round.

    python3 scripts/pairs.py --rounds 8 \\
        base='./bin/tilego-ab run flash-attention --batch 16 --heads 32 ... --json' \\
        new='./bin/tilego run flash-attention --batch 16 --heads 32 ... --json'

Each variant is NAME=COMMAND, run by the shell (so `VAR=x ./bin/tilego ...`
works); its stdout must be tilego run's JSON object (`time_ms`, `tflops`,
`ok`). The variants run in order within a round, so slow drifts of the
GPU's clock and power state (an H200 moves a 3 ms kernel by up to 10%
over minutes) fall on every variant alike. Round 1 adds `--check=true`
(the outputs checked against float64), later rounds `--check=false`. A
round's ratio is the first variant's time over the variant's (> 1: the
variant is faster); the summary gives, per variant, the median time and
the ratio's min, median and max and how many rounds it was faster.
--smi adds nvidia-smi's SM clock, temperature and power after each round.
A failed run is printed with its stderr's last line and left out; the
exit status is 1 when a run failed or failed its check. Stdlib only.
"""

import argparse
import json
import statistics
import subprocess
import sys


def parse_variant(s):
    name, sep, cmd = s.partition("=")
    if not sep or not name or not cmd.strip():
        raise argparse.ArgumentTypeError(f"want NAME=COMMAND, got {s!r}")
    return name, cmd


def run_once(cmd, check, timeout):
    full = f"{cmd} --check={'true' if check else 'false'}"
    try:
        p = subprocess.run(full, shell=True, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        return None, f"exit {p.returncode}: {last}"
    try:
        r = json.loads(p.stdout)
        return r, None
    except (json.JSONDecodeError, ValueError) as e:
        return None, f"not JSON: {e}"


def smi():
    try:
        return subprocess.run(
            ["nvidia-smi", "--query-gpu=clocks.sm,temperature.gpu,power.draw", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"nvidia-smi: {e}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variants", nargs="+", type=parse_variant, metavar="NAME=COMMAND")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=120, help="seconds a run may take")
    ap.add_argument("--smi", action="store_true", help="nvidia-smi's clock, temperature and power after each round")
    a = ap.parse_args(argv)
    if len(a.variants) < 2:
        ap.error("want at least two variants")
    names = [n for n, _ in a.variants]
    if len(set(names)) != len(names):
        ap.error(f"variant names repeat: {names}")
    width = max(len("variant"), *(len(n) for n in names))
    bad = 0  # runs that failed or failed their check

    times = {n: [] for n in names}        # ms of every successful run
    ratios = {n: [] for n in names[1:]}   # first's ms over n's ms, per round both ran
    for rnd in range(1, a.rounds + 1):
        got = {}
        for name, cmd in a.variants:
            r, err = run_once(cmd, rnd == 1, a.timeout)
            if err:
                print(f"round {rnd} {name:<{width}} failed: {err}", flush=True)
                bad += 1
                continue
            ms = r["time_ms"]
            got[name] = ms
            times[name].append(ms)
            ok = r.get("ok")
            print(f"round {rnd} {name:<{width}} ms {ms:.4f} tf {r.get('tflops', 0):.1f}" + (f" ok {ok}" if ok is not None else ""), flush=True)
            if ok is False:
                print(f"round {rnd} {name:<{width}} FAILED its check", flush=True)
                bad += 1
        base = got.get(names[0])
        for n in names[1:]:
            if base is not None and n in got:
                ratios[n].append(base / got[n])
        if a.smi:
            print(f"round {rnd} smi {smi()}", flush=True)

    print()
    print(f"{'variant':<{width}}  runs  median ms  vs {names[0]}: min / median / max  faster")
    for n in names:
        t = times[n]
        med = f"{statistics.median(t):9.4f}" if t else "        -"
        line = f"{n:<{width}}  {len(t):4d}  {med}"
        if n in ratios and ratios[n]:
            rs = ratios[n]
            line += f"  {min(rs):.4f} / {statistics.median(rs):.4f} / {max(rs):.4f}  {sum(x > 1 for x in rs)} of {len(rs)}"
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
