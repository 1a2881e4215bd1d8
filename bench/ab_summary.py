#!/usr/bin/env python3
"""The table of an A/B run (bench/run_ab_device.sh): builds of the engine timed alternately on the same inputs.

    ab_summary.py AB.tsv [--baseline NAME] [--markdown OUT.md]

AB.tsv holds spgemm-bench's rows (bench/README.md) with two columns in front:
variant (the build) and round. Per input and algorithm, each variant's best ms
over the rounds (each round's ms is already a median), its ratio to the
baseline's (the first variant unless --baseline names one; above 1: faster
than the baseline), and per variant the geometric mean of those ratios and the
inputs more than 3% slower. A row whose status is not ok or checked is shown
with its status and left out of the means.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from typing import Dict, List, Tuple

GOOD = ("ok", "checked")
SLOWER = 0.97  # a ratio below this: slower than the baseline beyond noise


def input_name(matrix: str) -> str:
    """A Matrix Market path without folders and .mtx.gz (its /aat, /f32 suffixes kept); a spec as it is."""
    parts = matrix.split("/")
    if ".mtx" in matrix:
        base = next(i for i, p in enumerate(parts) if ".mtx" in p)
        return "/".join([parts[base].split(".mtx")[0]] + parts[base + 1:])
    return matrix


def read(path: str) -> Tuple[List[str], Dict[Tuple[str, str, str], float], Dict[Tuple[str, str, str], str]]:
    variants: List[str] = []
    best: Dict[Tuple[str, str, str], float] = {}
    status: Dict[Tuple[str, str, str], str] = {}
    with open(path) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            v = r["variant"]
            if v not in variants:
                variants.append(v)
            key = (input_name(r["matrix"]), r["algorithm"], v)
            if r["status"] not in GOOD:
                status[key] = r["status"]
                continue
            try:
                ms = float(r["ms"])
            except ValueError:
                status[key] = "no time"
                continue
            best[key] = min(best.get(key, math.inf), ms)
    return variants, best, status


def table(path: str, baseline: str = "") -> List[str]:
    variants, best, status = read(path)
    if not variants:
        return ["%s: no rows" % path]
    base = baseline or variants[0]
    if base not in variants:
        raise SystemExit("ab_summary: no variant %r in %s (%s)" % (base, path, ", ".join(variants)))
    others = [v for v in variants if v != base]
    rows = sorted({(m, a) for m, a, _ in list(best) + list(status)})
    lines = ["| input | algorithm | " + " | ".join("%s ms" % v for v in [base] + others) + " | " +
             " | ".join("%s / %s" % (base, v) for v in others) + " |",
             "| --- | --- |" + " ---: |" * (1 + 2 * len(others))]
    logs: Dict[str, List[float]] = {v: [] for v in others}
    slower: Dict[str, List[str]] = {v: [] for v in others}
    for m, a in rows:
        cells = []
        for v in [base] + others:
            k = (m, a, v)
            cells.append("%.3f" % best[k] if k in best else status.get(k, "-"))
        ratios = []
        for v in others:
            b, x = best.get((m, a, base)), best.get((m, a, v))
            if b is None or x is None:
                ratios.append("-")
                continue
            ratios.append("%.2f" % (b / x))
            logs[v].append(math.log(b / x))
            if b / x < SLOWER:
                slower[v].append("%s %.2f" % (m, b / x))
        lines.append("| %s | %s | %s | %s |" % (m, a, " | ".join(cells), " | ".join(ratios)))
    lines.append("")
    for v in others:
        n = len(logs[v])
        mean = math.exp(sum(logs[v]) / n) if n else float("nan")
        lines.append("%s against %s: %.3fx in geometric mean over %d; slower beyond 3%% on %d%s" % (
            v, base, mean, n, len(slower[v]), (": " + ", ".join(slower[v])) if slower[v] else ""))
    bad = sorted({"%s (%s): %s" % (k[0], k[2], s) for k, s in status.items()})
    if bad:
        lines.append("not ok: " + "; ".join(bad))
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tsv")
    p.add_argument("--baseline", default="")
    p.add_argument("--markdown", default="")
    args = p.parse_args()
    lines = table(args.tsv, args.baseline)
    text = "\n".join(lines) + "\n"
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
