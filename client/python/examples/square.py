#!/usr/bin/env python3
"""Square a Matrix Market matrix on an spgemmd server and check it against scipy.

    python examples/square.py MATRIX.mtx[.gz] [--address localhost:50051] [--float32]

Prints the end-to-end time (upload, multiply, download), the server's compute
time and GFLOPS, scipy's time, and the largest difference scaled by |A||A|.
"""

from __future__ import annotations

import argparse
import time
import zlib

import numpy as np
import scipy.io
import scipy.sparse as sp

import spgemm


def load(path: str, dtype: np.dtype) -> sp.csr_array:
    """Reads a Matrix Market file (symmetric ones expanded); pattern files get seeded random values."""
    a = sp.csr_array(scipy.io.mmread(path), dtype=np.float64)
    a.sum_duplicates()
    if scipy.io.mminfo(path)[4] == "pattern":
        a.data = np.random.default_rng(zlib.crc32(path.encode())).uniform(-1.0, 1.0, a.nnz)
    return a.astype(dtype)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("matrix", help="a .mtx or .mtx.gz file")
    ap.add_argument("--address", default="localhost:50051", help="the server, host:port")
    ap.add_argument("--algorithm", default="auto")
    ap.add_argument("--float32", action="store_true", help="single precision (default double)")
    ap.add_argument("--token", default=None)
    args = ap.parse_args()

    a = load(args.matrix, np.dtype(np.float32 if args.float32 else np.float64))
    row_nnz = np.diff(a.indptr)
    flops = 2.0 * float(row_nnz[a.indices].sum())
    print("A: %d x %d, nnz %d, %s; A @ A: %.3g flops" % (a.shape[0], a.shape[1], a.nnz, a.dtype, flops))

    with spgemm.Client(args.address, token=args.token) as client:
        t0 = time.perf_counter()
        c = client.multiply(a, algorithm=args.algorithm)
        t_server = time.perf_counter() - t0
        stats = client.last_stats

    t0 = time.perf_counter()
    ref = a.astype(np.float64) @ a.astype(np.float64)
    t_scipy = time.perf_counter() - t0

    a64 = abs(a.astype(np.float64))
    scale = a64 @ a64
    diff = abs(c.astype(np.float64) - ref)
    # max |C - ref| / (|A||A|) over the structural product (0/0 counted as 0)
    worst = 0.0
    if diff.nnz:
        d = sp.csr_array(diff.multiply(scale.power(-1)))
        worst = float(d.data.max(initial=0.0))
        outside = sp.csr_array(diff - diff.multiply(scale.astype(bool)))
        outside.eliminate_zeros()
        if outside.nnz:
            worst = float("inf")

    print("C: nnz %d (scipy %d after dropping zeros)" % (c.nnz, ref.nnz))
    print("server, end to end: %8.3f s  %7.2f GFLOPS" % (t_server, flops / t_server / 1e9))
    if stats is not None and stats.compute_ms > 0:
        print("server, compute:    %8.3f s  %7.2f GFLOPS  (%s on %s)"
              % (stats.compute_ms / 1e3, flops / (stats.compute_ms / 1e3) / 1e9, stats.algorithm, stats.device))
    print("scipy:              %8.3f s  %7.2f GFLOPS" % (t_scipy, flops / t_scipy / 1e9))
    tol = 1e-4 if args.float32 else 1e-12
    print("max |C - scipy| / (|A||A|): %.3g  -> %s" % (worst, "OK" if worst <= tol else "MISMATCH"))
    raise SystemExit(0 if worst <= tol else 1)


if __name__ == "__main__":
    main()
