"""Times A @ A end to end through spgemmd against scipy and, where installed, CuPy.

    python compare.py --address HOST:PORT A.mtx.gz [B.mtx.gz ...]

For each matrix: `client.multiply(A, A)` (upload, multiply, stream back),
scipy's `A @ A` on one core, and `cupyx.scipy.sparse` (host to device, product,
device to host; and the product alone). Results are checked against scipy.
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable, List

import numpy as np
import scipy.io
import scipy.sparse as sp

import spgemm


def median_ms(run: Callable[[], object], repeats: int) -> float:
    run()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def flops(a: sp.csr_matrix) -> float:
    row_lengths = np.diff(a.indptr)
    return 2.0 * float(row_lengths[a.indices].sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("matrices", nargs="+")
    parser.add_argument("--address", default="localhost:50051")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    try:
        import cupy
        import cupyx.scipy.sparse as cusp
    except ImportError:  # no GPU stack on this host
        cupy = cusp = None

    header = "%-16s %10s %12s %12s %12s %12s %8s" % (
        "matrix", "flops", "spgemm e2e", "scipy", "cupy e2e", "cupy only", "check")
    rows: List[str] = [header]
    with spgemm.Client(args.address, timeout=600) as client:
        for path in args.matrices:
            a = sp.csr_matrix(scipy.io.mmread(path), dtype=np.float64)
            a.sort_indices()
            name = path.rsplit("/", 1)[-1].replace(".mtx.gz", "").replace(".mtx", "")
            ours = median_ms(lambda: client.multiply(a, a, progress=False), args.repeats)
            ref = a @ a
            scipy_ms = median_ms(lambda: a @ a, max(1, args.repeats // 2))
            c = sp.csr_matrix(client.multiply(a, a, progress=False))
            diff = abs(c - ref)
            scale = abs(a) @ abs(a)
            worst = float((diff.multiply(scale.power(-1))).max()) if diff.nnz else 0.0
            check = "ok" if worst <= 1e-12 else "%.1e" % worst
            cupy_e2e = cupy_only = float("nan")
            if cusp is not None:
                def e2e() -> object:
                    d = cusp.csr_matrix(a)
                    return (d @ d).get()
                d = cusp.csr_matrix(a)

                def product() -> object:
                    r = d @ d
                    cupy.cuda.Device().synchronize()
                    return r
                try:
                    if (d @ d).nnz != ref.nnz and (d @ d).nnz == 0:
                        raise RuntimeError("CuPy returned an empty product")
                    cupy_e2e = median_ms(e2e, args.repeats)
                    cupy_only = median_ms(product, args.repeats)
                except Exception as e:  # cuSPARSE failures surface here
                    print("%s: cupy failed: %s" % (name, e))
            rows.append("%-16s %10.3g %9.1f ms %9.1f ms %9.1f ms %9.1f ms %8s" % (
                name[:16], flops(a), ours, scipy_ms, cupy_e2e, cupy_only, check))
    print("\n".join(rows))


if __name__ == "__main__":
    main()
