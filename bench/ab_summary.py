#!/usr/bin/env python3
"""The tables of an A/B run (bench/run_ab_device.sh): builds of the engine timed alternately on the same inputs.

    ab_summary.py AB.tsv [--amg AMG.tsv] [--baseline NAME] [--markdown OUT.md]

AB.tsv holds spgemm-bench's rows (bench/README.md) with two columns in front:
variant (the build) and round. Per input and algorithm, each variant's best ms
over the rounds (each round's ms is already a median), its ratio to the
baseline's (the first variant unless --baseline names one; above 1: faster
than the baseline), and per variant the geometric mean of those ratios and the
inputs more than 3% slower. A row whose status is not ok or checked is shown
with its status and left out of the means.

AMG.tsv, where given, holds spgemm-amg-bench's rows the same way: per problem
and variant the best over the rounds of the Galerkin pyramid, its numeric-only
form, the setup and the re-setup (ms), the setup over the re-setup, cuSPARSE's
pyramid over ours and the baseline's pyramid over the variant's.
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


AMG_COLUMNS = ("pyramid_ms", "pyramid_numeric_ms", "setup_ms", "resetup_ms", "cusparse_pyramid_ms")


def number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 else math.nan


def amg_table(path: str, baseline: str = "") -> List[str]:
    variants: List[str] = []
    best: Dict[Tuple[str, str], Dict[str, float]] = {}
    status: Dict[Tuple[str, str], str] = {}
    with open(path) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            v = r["variant"]
            if v not in variants:
                variants.append(v)
            key = (r["problem"], v)
            if r.get("status", "ok") != "ok":
                status[key] = r["status"]
                continue
            cells = best.setdefault(key, {})
            for c in AMG_COLUMNS:
                x = number(r.get(c, ""))
                if not math.isnan(x):
                    cells[c] = min(cells.get(c, math.inf), x)
    if not variants:
        return ["%s: no rows" % path]
    base = baseline or variants[0]
    lines = ["| problem | variant | pyramid ms | numeric pyramid ms | setup ms | re-setup ms | setup / re-setup |"
             " cuSPARSE / pyramid | %s / variant pyramid |" % base,
             "| --- | --- |" + " ---: |" * 7]
    problems = sorted({p for p, _ in list(best) + list(status)})
    for p in problems:
        vendor = min((c["cusparse_pyramid_ms"] for (q, _), c in best.items()
                      if q == p and "cusparse_pyramid_ms" in c), default=math.nan)
        for v in variants:
            if (p, v) in status:
                lines.append("| %s | %s | %s |" % (p, v, status[(p, v)]) + " |" * 6)
                continue
            c = best.get((p, v), {})
            pyramid = c.get("pyramid_ms", math.nan)
            base_pyramid = best.get((p, base), {}).get("pyramid_ms", math.nan)
            cells = [pyramid, c.get("pyramid_numeric_ms", math.nan), c.get("setup_ms", math.nan),
                     c.get("resetup_ms", math.nan), ratio(c.get("setup_ms", math.nan), c.get("resetup_ms", math.nan)),
                     ratio(vendor, pyramid), ratio(base_pyramid, pyramid)]
            lines.append("| %s | %s | %s |" % (p, v, " | ".join("-" if math.isnan(x) else "%.2f" % x for x in cells)))
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tsv")
    p.add_argument("--amg", default="")
    p.add_argument("--baseline", default="")
    p.add_argument("--markdown", default="")
    args = p.parse_args()
    lines = table(args.tsv, args.baseline)
    if args.amg:
        lines += [""] + amg_table(args.amg, args.baseline)
    text = "\n".join(lines) + "\n"
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
