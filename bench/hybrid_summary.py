#!/usr/bin/env python3
"""Summary block of bench/results/h100-hybrid.md from spgemm-bench's TSV.

    python3 bench/hybrid_summary.py bench.tsv

Per matrix: auto, hash, rmerge, esc and block against the fastest cuSPARSE ALG that
succeeded (rmat:18:16, which cuSPARSE cannot hold in 32-bit indices: ALG3's
671 ms from ../shared/ANCHORS.md), auto against our fastest named method, and
auto's peak device memory beyond C per entry of C; then the issue's targets.
"""
import csv
import math
import sys

ANCHORS_MS = {"rmat:18:16": 671.0}
STENCILS = ["poisson3d7:100", "poisson3d27:64", "poisson2d5:1024", "elasticity3d:40"]
GRAPHS = ["ca-CondMat", "email-Enron", "hep-th", "p2p-Gnutella31", "soc-Epinions1", "web-NotreDame",
          "wiki-Vote", "rmat:16:16", "rmat:17:16", "rmat:18:16"]


def main(path):
    rows = list(csv.DictReader(open(path), delimiter="\t"))
    order, ok, auto_row = [], {}, {}
    for r in rows:
        if r["matrix"] not in order:
            order.append(r["matrix"])
        if r["status"] == "ok":
            ok[r["matrix"], r["algorithm"]] = float(r["ms"])
            if r["algorithm"] == "auto":
                auto_row[r["matrix"]] = r

    def ms(m, algo):
        return ok.get((m, algo), float("nan"))

    print(f"{'matrix':<16} {'flops':>9} {'auto':>8} {'hash':>8} {'rmerge':>8} {'esc':>8} {'block':>8} {'cuSP':>8} {'alg':>4} "
          f"{'ratio':>6} {'auto/best':>9} {'ws B/nnzC':>9}")
    ratios, below, behind = {}, [], []
    for m in order:
        cusparse = [(ok[m, f"cusparse-alg{k}"], f"alg{k}") for k in (1, 2, 3) if (m, f"cusparse-alg{k}") in ok]
        best, alg = min(cusparse) if cusparse else (ANCHORS_MS[m], "ANCH")
        r = auto_row[m]
        auto = float(r["ms"])
        ours = min(x for x in (ms(m, "hash"), ms(m, "rmerge"), ms(m, "esc"), ms(m, "block")) if not math.isnan(x))
        nnz_c = int(r["nnz_c"])
        c_bytes = (int(r["n"]) + 1) * 8 + nnz_c * 12
        workspace = max(0, int(r["peak_bytes"]) - c_bytes) / nnz_c if nnz_c else 0.0
        ratios[m] = best / auto
        if ratios[m] < 1:
            below.append(f"{m} {ratios[m]:.2f}")
        if float(r["flops"]) >= 1e8 and auto > 1.1 * ours:
            behind.append(m)
        print(f"{m:<16} {float(r['flops']):9.2e} {auto:8.3f} {ms(m, 'hash'):8.3f} {ms(m, 'rmerge'):8.3f} "
              f"{ms(m, 'esc'):8.3f} {ms(m, 'block'):8.3f} {best:8.3f} {alg:>4} {ratios[m]:6.2f} {auto / ours:9.2f} {workspace:9.1f}")

    def geomean(names):
        names = [m for m in names if m in ratios]
        return math.exp(sum(math.log(ratios[m]) for m in names) / len(names)), len(names)

    parts = [f"{label} {g:.2f} ({n})" for label, (g, n) in
             (("all", geomean(order)), ("stencils+elasticity", geomean(STENCILS)), ("graphs+R-MAT", geomean(GRAPHS)))]
    print("geomean auto vs fastest cuSPARSE: " + ", ".join(parts))
    print("auto below cuSPARSE: " + (", ".join(below) or "none"))
    print("auto more than 10% behind our best method (>=1e8 flops): " + (", ".join(behind) or "none"))
    print("ratio = fastest cuSPARSE ms / auto ms (rmat:18:16: ANCHORS.md ALG3 671 ms, spgemm-bench skips cuSPARSE "
          "where nnz(C) exceeds 32 bits); auto/best = auto ms / fastest of hash, rmerge, esc, block; ws = auto's peak "
          "device memory beyond C per nnz(C) (peak counts what the product allocated: workspace + C)")


if __name__ == "__main__":
    main(sys.argv[1])
