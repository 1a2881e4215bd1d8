"""End to end through spgemmd from Python, per path, against scipy and CuPy in the same run.

    python bench/e2e_bench.py --tcp HOST:PORT --unix unix:///path [matrices/*.mtx.gz] \
        [--generated poisson3d7:74 ...] [--repeats 5] [--tsv out.tsv] [--gpu NAME]

For each matrix A, C = A @ A end to end (upload A, multiply, C back in this
process, the temporary A deleted) on each path:

  tcp, unix       the wire (bytes in gRPC messages) over loopback TCP / the Unix socket
  shm             shared-memory regions (Client(transfer="shared_memory") on the Unix socket)
  ipc             CuPy in, CuPy out by CUDA IPC (GPU host, a GPU server)
  scipy           A @ A in this process (one core)
  cupy            cupyx.scipy.sparse in this process: host to device, A @ A, device to host
  cupy-device     cupyx's A @ A alone, A already on the device (what ipc competes with)
  tcp-download,   the wire alone: C kept on the server, then downloaded (its GB/s is
  unix-download   the Python client's decode rate)

Every path's C is checked against scipy's (structure, and values to 1e-12 of
|A||A|, after entries within 1e-12 |A||A| of 0 are dropped from both: they
cancel to 0.0 in one summation order and to +-1e-17 in another; past 2e7
entries, nnz and 1000 sampled rows). Rows of the TSV:
gpu matrix rows nnz_a nnz_c path ms min_ms result_gbps server_ms status
(ms: median of --repeats after one warm-up; result_gbps: bytes of C, CSR with
int64 offsets, int32 columns and float64 values, per ms; server_ms: the
server's compute time; status ok, failed: ..., mismatch: ... or skipped: ...).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import scipy.io
import scipy.sparse as sp

import spgemm

COLUMNS = ["gpu", "matrix", "rows", "nnz_a", "nnz_c", "path", "ms", "min_ms", "result_gbps", "server_ms", "status"]
FULL_CHECK_NNZ = 20_000_000


def poisson3d7(n: int) -> sp.csr_array:
    """The engine's poisson3d7:N: the 7-point Laplacian of an N^3 grid (6 on the diagonal, -1 off it)."""
    e = np.ones(n)
    t = sp.diags_array([-e[:-1], 2 * e, -e[:-1]], offsets=[-1, 0, 1], format="csr")
    i = sp.identity(n, format="csr")
    a = sp.kron(sp.kron(t, i), i) + sp.kron(sp.kron(i, t), i) + sp.kron(sp.kron(i, i), t)
    return sp.csr_array(a)


def uniform(n: int, per_row: int, seed: int = 1) -> sp.csr_array:
    """N x N with up to `per_row` distinct uniformly random columns per row, values in (0, 1] (the engine's er class)."""
    rng = np.random.default_rng(seed)
    cols = np.sort(rng.integers(0, n, size=(n, per_row)), axis=1)
    keep = np.ones(cols.shape, dtype=bool)
    keep[:, 1:] = cols[:, 1:] != cols[:, :-1]
    counts = keep.sum(axis=1)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    return sp.csr_array((1.0 - rng.random(int(indptr[-1])), cols[keep].astype(np.int32), indptr), shape=(n, n))


def generated(spec: str) -> sp.csr_array:
    kind, *args = spec.split(":")
    if kind == "poisson3d7":
        return poisson3d7(int(args[0]))
    if kind == "er":
        return uniform(int(args[0]), int(args[1]), int(args[2]) if len(args) > 2 else 1)
    raise SystemExit("unknown generator %r (poisson3d7:N or er:N:D[:SEED])" % spec)


def load(path: str) -> sp.csr_array:
    """A Matrix Market file as float64 CSR (symmetric files expanded, pattern entries 1.0)."""
    a = sp.csr_array(scipy.io.mmread(path), dtype=np.float64)
    a.sum_duplicates()
    return a


def result_bytes(c: Any) -> int:
    return 8 * (c.shape[0] + 1) + 12 * int(c.nnz)


def _canonical(m: Any) -> sp.csr_array:
    m = sp.csr_array(m, dtype=np.float64)
    m.sum_duplicates()
    m.sort_indices()
    return m


def _drop_tiny(m: sp.csr_array, tiny: sp.csr_array) -> sp.csr_array:
    """m without its entries of |value| <= tiny_ij (tiny's structure covers m's where m is right)."""
    keep = (abs(m) - tiny) > 0
    kept = _canonical(m.multiply(keep))
    kept.eliminate_zeros()
    return kept


class Reference:
    """scipy's C = A @ A, made comparable with another summation order's.

    Summed in another order, an entry that cancels is 0.0 in one product and
    +-1e-17 in the other: scipy drops its exact zeros, the others keep theirs
    (or the reverse). Entries with |value| <= 1e-12 (|A||A|)_ij, the scale of
    the value check, are dropped from both products before structure and
    values are compared. Past FULL_CHECK_NNZ entries: 1000 sampled rows that
    way, and the count of entries above 1e-12 times a bound of every
    (|A||A|)_ij.
    """

    def __init__(self, ref: sp.csr_array, a: sp.csr_array) -> None:
        ref = _canonical(ref)
        self.shape = ref.shape
        abs_a = abs(_canonical(a))
        if ref.nnz > FULL_CHECK_NNZ:
            self.rows = np.random.default_rng(0).choice(ref.shape[0], size=min(1000, ref.shape[0]), replace=False)
            self.rows.sort()
            scale = _canonical(abs_a[self.rows] @ abs_a)
            ref_rows = _canonical(ref[self.rows])
            # (|A||A|)_ij <= (the largest row sum of |A|) * (the largest |a_kj|)
            self.bound = 1e-12 * float(abs_a.sum(axis=1).max()) * float(abs_a.max()) if abs_a.nnz else 0.0
            self.nnz = int(np.count_nonzero(np.abs(ref.data) > self.bound))
        else:
            self.rows = None
            scale = _canonical(abs_a @ abs_a)
            ref_rows = ref
        self.tiny = _canonical(1e-12 * scale)
        self.ref = _drop_tiny(ref_rows, self.tiny)

    def check(self, c: Any) -> str:
        """'ok' where c equals scipy's product (structure; values within 1e-12 of |A||A|), else why not."""
        if hasattr(c, "get"):  # CuPy
            c = c.get()
        c = _canonical(c)
        if c.shape != self.shape:
            return "mismatch: shape %s, scipy %s" % (c.shape, self.shape)
        if self.rows is not None:
            nnz = int(np.count_nonzero(np.abs(c.data) > self.bound))
            if nnz != self.nnz:
                return "mismatch: %d entries above 1e-12 |A||A|'s bound, scipy %d" % (nnz, self.nnz)
            c = _canonical(c[self.rows])
        c = _drop_tiny(c, self.tiny)
        ref = self.ref
        if c.nnz != ref.nnz:
            return "mismatch: nnz %d, scipy %d (entries within 1e-12 |A||A| of 0 dropped from both)" % (c.nnz, ref.nnz)
        if not (np.array_equal(c.indptr, ref.indptr) and np.array_equal(c.indices, ref.indices)):
            return "mismatch: structure differs from scipy's (entries within 1e-12 |A||A| of 0 dropped from both)"
        excess = (abs(c - ref) - self.tiny).max() if c.nnz else 0.0
        return "ok" if excess <= 0 else "mismatch: values differ by %g beyond 1e-12 |A||A|" % excess


def check(c: Any, ref: sp.csr_array, a: sp.csr_array) -> str:
    """'ok' where c equals scipy's product (see Reference), else why not."""
    return Reference(ref, a).check(c)


class Timer:
    """Median and minimum of a call's wall time in ms, after a warm-up."""

    def __init__(self, repeats: int) -> None:
        self.repeats = repeats

    def __call__(self, run: Callable[[], Any]) -> Tuple[float, float, Any]:
        last = run()
        times = []
        for _ in range(self.repeats):
            start = time.perf_counter()
            last = run()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times), min(times), last


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("matrices", nargs="*", help=".mtx / .mtx.gz files")
    parser.add_argument("--generated", nargs="*", default=[], help="poisson3d7:N or er:N:D[:SEED]")
    parser.add_argument("--tcp", default="", help="HOST:PORT of the server")
    parser.add_argument("--unix", default="", help="unix:///path of the same server's socket")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--large-repeats", type=int, default=2, help="repeats where nnz(C) > 5e7")
    parser.add_argument("--tsv", default="")
    parser.add_argument("--gpu", default="cpu", help="the GPU's name for the gpu column")
    parser.add_argument("--summary", default="", help="only print the summary of this TSV (of either bench)")
    args = parser.parse_args()
    if args.summary:
        summarize(read_tsv(args.summary))
        return 0
    if not args.tcp or not args.unix:
        parser.error("--tcp and --unix are required")

    try:
        import cupy
        import cupyx.scipy.sparse as cusp
    except ImportError:
        cupy = cusp = None

    clients = {
        "tcp": spgemm.Client(args.tcp, transfer="wire", timeout=600, progress=False),
        "unix": spgemm.Client(args.unix, transfer="wire", timeout=600, progress=False),
        "shm": spgemm.Client(args.unix, transfer="shared_memory", timeout=600, progress=False),
    }
    ipc = clients["shm"].cuda_ipc and cupy is not None
    rows: List[Dict[str, Any]] = []
    out = open(args.tsv, "w") if args.tsv else None
    if out:
        out.write("\t".join(COLUMNS) + "\n")

    def emit(row: Dict[str, Any]) -> None:
        rows.append(row)
        line = "\t".join(str(row.get(k, "NA")) for k in COLUMNS)
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()

    inputs: List[Tuple[str, Callable[[], sp.csr_array]]] = []
    for path in args.matrices:
        name = os.path.basename(path).replace(".mtx.gz", "").replace(".mtx", "")
        inputs.append((name, lambda path=path: load(path)))
    for spec in args.generated:
        inputs.append((spec, lambda spec=spec: generated(spec)))

    for name, make in inputs:
        a = make()
        base = {"gpu": args.gpu, "matrix": name, "rows": a.shape[0], "nnz_a": a.nnz}
        start = time.perf_counter()
        ref = a @ a
        scipy_ms = (time.perf_counter() - start) * 1e3
        big = ref.nnz > 50_000_000
        timer = Timer(args.large_repeats if big else args.repeats)
        nbytes = result_bytes(ref)
        reference = Reference(ref, a)

        def row(path: str, measured: Optional[Tuple[float, float, Any]], status: str, server_ms: Any = "NA") -> None:
            r = dict(base, nnz_c=ref.nnz, path=path, server_ms=server_ms, status=status)
            if measured is not None:
                r.update(ms="%.3f" % measured[0], min_ms="%.3f" % measured[1],
                         result_gbps="%.3f" % (nbytes / measured[0] / 1e6))
            emit(r)

        # scipy once more, timed like the others (its first run above made the reference).
        row("scipy", Timer(1 if big else min(args.repeats, 3))(lambda: a @ a), "ok")
        for path in ("tcp", "unix", "shm"):
            c = clients[path]
            try:
                measured = timer(lambda: c.multiply(a))
                stats = c.last_stats
                row(path, measured, reference.check(measured[2]), "%.3f" % stats.compute_ms if stats else "NA")
            except Exception as e:  # an RPC's error, or one of the check's
                row(path, None, "failed: %s" % str(e).splitlines()[0][:160])
        for path in ("tcp", "unix"):
            c = clients[path]
            try:
                with c.upload(a) as r, c.multiply(r, r, keep=True) as kept:
                    measured = timer(lambda: c.download(kept))
                    row(path + "-download", measured, reference.check(measured[2]))
            except Exception as e:
                row(path + "-download", None, "failed: %s" % str(e).splitlines()[0][:160])
        if cupy is None:
            for path in ("ipc", "cupy", "cupy-device"):
                row(path, None, "skipped: no CuPy here")
            continue
        da = cusp.csr_matrix(a)

        def cupy_e2e() -> Any:
            d = cusp.csr_matrix(a)
            return (d @ d).get()

        def cupy_device() -> Any:
            c = da @ da
            cupy.cuda.get_current_stream().synchronize()
            return c

        def ipc_e2e() -> Any:
            c = clients["shm"].multiply(da)
            cupy.cuda.get_current_stream().synchronize()
            return c

        for path, run in (("cupy", cupy_e2e), ("cupy-device", cupy_device), ("ipc", ipc_e2e)):
            if path == "ipc" and not ipc:
                row(path, None, "skipped: the server takes no CUDA IPC handles (not on this host's GPUs)")
                continue
            try:
                measured = timer(run)
                # CuPy returns an empty matrix without an error on products past its limits.
                status = reference.check(measured[2])
                server = clients["shm"].last_stats if path == "ipc" else None
                row(path, measured, status, "%.3f" % server.compute_ms if server else "NA")
            except Exception as e:  # cuSPARSE's INSUFFICIENT_RESOURCES, out of memory
                row(path, None, "failed: %s" % str(e).splitlines()[0][:160])
            finally:
                cupy.get_default_memory_pool().free_all_blocks()
        del da
    for c in clients.values():
        c.close()
    if out:
        out.close()
    summarize(rows)
    return 0 if all(r["status"] == "ok" or r["status"].startswith(("skipped", "failed")) for r in rows) else 1


def read_tsv(path: str) -> List[Dict[str, Any]]:
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        return [dict(zip(header, line.rstrip("\n").split("\t"))) for line in f if line.strip()]


def summarize(rows: List[Dict[str, Any]]) -> None:
    """The issue's targets per matrix: shm against CuPy and scipy, ipc against CuPy's A @ A, the wire's GB/s."""
    by: Dict[Tuple[str, str], Dict[str, Any]] = {(r["matrix"], r["path"]): r for r in rows}
    matrices = list(dict.fromkeys(r["matrix"] for r in rows))

    def ms(m: str, p: str) -> float:
        r = by.get((m, p))
        return float(r["ms"]) if r and r.get("ms") not in (None, "NA") and r["status"] == "ok" else float("nan")

    print("\n%-22s %10s %9s %9s %9s %9s %9s %9s %9s %8s %8s %8s %9s" % (
        "matrix", "nnz(C)", "scipy", "tcp", "unix", "shm", "cpp-shm", "cupy", "ipc", "shm/cupy", "shm/scipy",
        "ipc/dev", "tcp GB/s"))
    for m in matrices:
        nnz = int(next(r["nnz_c"] for r in rows if r["matrix"] == m))
        tcp_gbps = by.get((m, "tcp-download"), {}).get("result_gbps", "NA")
        print("%-22s %10d %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %8.2f %8.2f %8.2f %9s" % (
            m[:22], nnz, ms(m, "scipy"), ms(m, "tcp"), ms(m, "unix"), ms(m, "shm"), ms(m, "cpp-shm"), ms(m, "cupy"),
            ms(m, "ipc"), ms(m, "shm") / ms(m, "cupy"), ms(m, "shm") / ms(m, "scipy"), ms(m, "ipc") / ms(m, "cupy-device"),
            tcp_gbps))
    print("targets: shm/cupy <= 1.5 on cage11, soc-Epinions1 and a 1e7-nnz product; shm/scipy < 1 on every shared "
          "matrix; ipc/dev < 1; tcp GB/s >= 2 where nnz(C) > 1e7")


if __name__ == "__main__":
    sys.exit(main())
