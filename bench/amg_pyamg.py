#!/usr/bin/env python3
"""pyamg on the matrices spgemm-amg-bench dumped, with the engine's settings, and the table of both.

    amg_pyamg.py DUMP_DIR OURS.tsv OUT.tsv

For every problem of OURS.tsv (spgemm-amg-bench --tsv, its matrices written by
--dump into DUMP_DIR): pyamg.smoothed_aggregation_solver with max_coarse 1000,
no candidate improvement, Chebyshev pre- and post-smoothing, a dense coarse
solve (the rigid-body modes as B for elasticity3d); its setup timed once (the
coarsest level's pseudo-inverse included: pyamg would compute it at the first
solve, ours is part of the setup), its CG solve of A x = 1 to 1e-8 timed once.
OUT.tsv: our columns, then pyamg's (setup and solve ms, iterations, levels,
operator complexity) and the ratios, written after every problem (a run cut
short keeps what it measured); a short table last on stdout. (pyamg stops
coarsening at max_coarse nodes, ours at max_coarse rows: elasticity3d's
smallest problems get one level fewer from pyamg.)
"""

from __future__ import annotations

import argparse
import csv
import os
import time

import numpy as np
import scipy.sparse as sp


def load(dump: str, name: str):
    base = os.path.join(dump, name)
    indptr = np.fromfile(base + ".indptr", dtype=np.int64)
    indices = np.fromfile(base + ".indices", dtype=np.int32)
    data = np.fromfile(base + ".data", dtype=np.float64)
    n = len(indptr) - 1
    a = sp.csr_matrix((data, indices, indptr), shape=(n, n))
    modes = None
    if os.path.exists(base + ".modes"):
        modes = np.fromfile(base + ".modes", dtype=np.float64).reshape(n, 6)
    return a, modes


def run(a, modes):
    import pyamg

    block = 3 if modes is not None else 1
    t = time.perf_counter()
    ml = pyamg.smoothed_aggregation_solver(
        a.tobsr(blocksize=(block, block)) if block > 1 else a, B=modes, max_coarse=1000,
        improve_candidates=None, presmoother=("chebyshev", {}), postsmoother=("chebyshev", {}),
        coarse_solver="pinv")
    # pyamg inverts the coarsest level at its first solve; ours is part of the
    # setup (its coarse_solver phase): do it here, inside the setup's time.
    coarsest = ml.levels[-1].A
    ml.coarse_solver(coarsest, np.zeros(coarsest.shape[0]))
    setup_ms = 1e3 * (time.perf_counter() - t)
    residuals: list = []
    t = time.perf_counter()
    ml.solve(np.ones(a.shape[0]), tol=1e-8, accel="cg", residuals=residuals)
    solve_ms = 1e3 * (time.perf_counter() - t)
    return {
        "pyamg_setup_ms": setup_ms,
        "pyamg_solve_ms": solve_ms,
        "pyamg_iterations": len(residuals) - 1,
        "pyamg_levels": len(ml.levels),
        "pyamg_operator_complexity": ml.operator_complexity(),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dump")
    p.add_argument("ours")
    p.add_argument("out")
    args = p.parse_args()
    with open(args.ours) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows:
        raise SystemExit("%s: no problems (spgemm-amg-bench measured none)" % args.ours)
    fields = list(rows[0].keys())
    for extra in ("pyamg_setup_ms", "pyamg_solve_ms", "pyamg_iterations", "pyamg_levels",
                  "pyamg_operator_complexity", "setup_speedup_vs_pyamg", "solve_speedup_vs_pyamg"):
        if extra not in fields:
            fields.append(extra)

    def write() -> None:  # after every problem: a run cut short keeps what it measured
        with open(args.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, delimiter="\t", restval="NA")
            w.writeheader()
            w.writerows(rows)

    write()
    for r in rows:
        if r["status"] != "ok":
            continue
        a, modes = load(args.dump, r["problem"])
        r.update({k: "%.3f" % v if isinstance(v, float) else str(v) for k, v in run(a, modes).items()})
        r["setup_speedup_vs_pyamg"] = "%.1f" % (float(r["pyamg_setup_ms"]) / float(r["setup_ms"]))
        r["solve_speedup_vs_pyamg"] = "%.1f" % (float(r["pyamg_solve_ms"]) / float(r["solve_ms"]))
        print("%s: pyamg setup %s ms, %s iterations" % (r["problem"], r["pyamg_setup_ms"], r["pyamg_iterations"]),
              flush=True)
        write()
    print("\n%-16s %9s %9s %7s %9s %11s %10s %9s %5s %5s %9s" % (
        "problem", "setup_ms", "resetup_x", "pyr_ms", "cusp_ms", "pyramid_x", "pyamg_ms", "setup_x", "its",
        "p_its", "solve_ms"))
    for r in rows:
        print("%-16s %9s %9s %7s %9s %11s %10s %9s %5s %5s %9s" % (
            r["problem"], r["setup_ms"], r["resetup_speedup"], r["pyramid_ms"], r["cusparse_pyramid_ms"],
            r["pyramid_speedup"], r.get("pyamg_setup_ms", "NA"), r.get("setup_speedup_vs_pyamg", "NA"),
            r["iterations"], r.get("pyamg_iterations", "NA"), r["solve_ms"]))


if __name__ == "__main__":
    main()
