#!/usr/bin/env python3
"""Graph analytics through spgemmd against SuiteSparse:GraphBLAS (python-graphblas) on the same
host, in one run: triangle counting on the shared graphs and generated R-MAT graphs (time, edges
per second, the count checked against GraphBLAS's), the masked product against the unmasked
product followed by filtering, and one Markov clustering end to end (bench/README.md).

    graph_bench.py --address HOST:PORT --cli BIN/spgemm --matrices DIR --out h100-graph.tsv
                   [--graphs NAME...] [--generated rmat:18:16 rmat:20:16] [--threads 16] [--mcl NAME]

Triangles: the sum of C<L> = L L over plus_pair, L the strictly lower triangle of the undirected
graph without self loops (LAGraph's Sandia LL, as GraphBLAS runs it); edges = nnz(L). Where the
degrees are skewed the vertices are first numbered by decreasing degree (the worked example's
presort, graphs.skewed_degree_order; on the client, its time in presort_ms), and both sides
count the same renumbered graph; --no-presort keeps every graph's own numbering. The
service's time is the server's (JobStats.compute_ms of the masked product and of the sum), best
of --repeats, and end to end (both calls, from the client); GraphBLAS's is the same two calls on
--threads threads, best of --repeats. A generated graph is made by the engine's generator
(`spgemm upload SPEC`), symmetrized on the server (A + A^T, diagonal dropped) and downloaded
for GraphBLAS. Unmasked + filter: C = L L over plus_pair, then C .* L (ewise_mult, first):
server time; "does not fit" where the unmasked product exceeds the device.
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import time
from typing import Dict, List, Optional, Tuple

import numpy as np
import scipy.sparse as sp

import spgemm

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "examples", "graph"))  # as packaged (bench/package_device.sh --graph)
sys.path.insert(0, os.path.join(HERE, "..", "client", "python", "examples", "graph"))  # in the source tree

from graphs import read_adjacency  # noqa: E402
from spgemm.algorithms import markov_clustering, relabeled, skewed_degree_order  # noqa: E402

COLUMNS = ["graph", "vertices", "edges", "presorted", "presort_ms", "triangles", "triangles_graphblas", "spgemmd_ms", "spgemmd_e2e_ms",
           "edges_per_s", "graphblas_ms", "graphblas_edges_per_s", "speedup", "masked_ms", "unmasked_filter_ms",
           "masked_speedup", "method", "status"]


def server_ms(client: spgemm.Client) -> float:
    return client.last_stats.compute_ms if client.last_stats is not None else float("nan")


def undirected_on_server(client: spgemm.Client, cli: str, spec: str) -> spgemm.RemoteMatrix:
    """The engine's generated graph `spec`, made undirected without self loops on the server."""
    out = subprocess.run([cli, "--server", client.address, "upload", spec], check=True, capture_output=True, text=True)
    handle = out.stdout.split()[0]
    with client.matrix(handle) as a, a.ewise_add(spgemm.transposed(a), "first") as s:
        return s.select("offdiag")


def service_triangles(client: spgemm.Client, l: spgemm.RemoteMatrix,
                      repeats: int) -> Tuple[int, float, float, float, str]:
    """(triangles, best server ms, best end-to-end ms, best server ms of the masked product
    alone, the method) of sum(L<L> = L L)."""
    best_server, best_e2e, best_product, count, method = float("inf"), float("inf"), float("inf"), 0, ""
    for _ in range(repeats + 1):  # the first warms up (kernels loaded, the estimate remembered)
        started = time.perf_counter()
        with l.mxm(l, "plus_pair", mask=l) as c:
            product_ms = server_ms(client)
            method = client.last_stats.algorithm
            count = int(c.reduce_scalar() or 0)
            total_ms = product_ms + server_ms(client)
        e2e = (time.perf_counter() - started) * 1e3
        best_server, best_e2e = min(best_server, total_ms), min(best_e2e, e2e)
        best_product = min(best_product, product_ms)
    return count, best_server, best_e2e, best_product, method


def unmasked_filter_ms(client: spgemm.Client, l: spgemm.RemoteMatrix, repeats: int) -> Optional[float]:
    """Server ms of L L over plus_pair without the mask, then kept to L's entries; None where it does not fit."""
    best = float("inf")
    try:
        for _ in range(repeats + 1):
            with l.mxm(l, "plus_pair") as full:
                ms = server_ms(client)
                with full.ewise_mult(l, "first"):
                    ms += server_ms(client)
            best = min(best, ms)
    except spgemm.ResourceExhausted:
        return None
    return best


def graphblas_triangles(s: sp.sparray, threads: int, repeats: int) -> Tuple[int, float]:
    import graphblas as gb

    gb.ss.config["nthreads"] = threads
    a = gb.io.from_scipy_sparse(sp.csr_array(s, dtype=np.float64))
    best, count = float("inf"), 0
    for _ in range(repeats + 1):
        started = time.perf_counter()
        l = a.select("tril", -1).new()
        c = gb.Matrix(float, *l.shape)
        c(mask=l.S) << l.mxm(l, gb.semiring.plus_pair)
        count = int(c.reduce_scalar(gb.monoid.plus).new().value or 0)
        best = min(best, (time.perf_counter() - started) * 1e3)
    return count, best


def presorted(local: sp.sparray, presort: bool) -> Tuple[sp.sparray, Dict]:
    """The graph numbered by decreasing degree where its degrees are skewed (and `presort`)."""
    started = time.perf_counter()
    order = skewed_degree_order(local) if presort else None
    if order is not None:
        local = relabeled(local, order)
    return local, {"presorted": "yes" if order is not None else "no",
                   "presort_ms": (time.perf_counter() - started) * 1e3 if presort else ""}


def bench_graph(client: spgemm.Client, name: str, local: sp.sparray, args,
                stored: Optional[spgemm.RemoteMatrix] = None) -> Dict:
    """The triangle rows of one undirected graph; `stored`: the graph as the server holds it already."""
    row: Dict = {"graph": name, "vertices": local.shape[0]}
    local, sort = presorted(local, args.presort)
    row.update(sort)
    if stored is None or sort["presorted"] == "yes":
        with client.upload(local) as s:
            return bench_stored(client, s, local, row, args)
    return bench_stored(client, stored, local, row, args)


def bench_stored(client: spgemm.Client, s: spgemm.RemoteMatrix, local: sp.sparray, row: Dict, args) -> Dict:
    with s.select("tril", -1) as l:
        row["edges"] = l.nnz
        count, ms, e2e, masked, method = service_triangles(client, l, args.repeats)
        row.update(triangles=count, spgemmd_ms=ms, spgemmd_e2e_ms=e2e, edges_per_s=l.nnz / (ms / 1e3), method=method)
        row["masked_ms"] = masked
        unmasked = unmasked_filter_ms(client, l, args.repeats)
        row["unmasked_filter_ms"] = "does not fit" if unmasked is None else unmasked
        row["masked_speedup"] = "" if unmasked is None else unmasked / masked
    gcount, gms = graphblas_triangles(local, args.threads, args.repeats)
    row.update(triangles_graphblas=gcount, graphblas_ms=gms, graphblas_edges_per_s=row["edges"] / (gms / 1e3),
               speedup=gms / row["spgemmd_ms"])
    row["status"] = "ok" if gcount == count else "MISMATCH"
    return row


def bench_mcl(client: spgemm.Client, name: str, a: sp.sparray) -> Dict:
    started = time.perf_counter()
    labels = markov_clustering(client, a)
    seconds = time.perf_counter() - started
    return {"graph": "mcl:" + name, "vertices": a.shape[0], "edges": a.nnz // 2,
            "spgemmd_e2e_ms": seconds * 1e3, "method": "%d clusters" % len(np.unique(labels)), "status": "ok"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", required=True)
    parser.add_argument("--cli", required=True, help="the spgemm CLI (generated graphs)")
    parser.add_argument("--matrices", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--graphs", nargs="*", default=["hep-th", "wiki-Vote", "ca-CondMat", "p2p-Gnutella31",
                                                         "email-Enron", "delaunay_n16", "soc-Epinions1",
                                                         "luxembourg_osm"])
    parser.add_argument("--generated", nargs="*", default=["rmat:18:16", "rmat:20:16"])
    parser.add_argument("--threads", type=int, default=16, help="GraphBLAS's threads")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--mcl", default="ca-CondMat", help="the shared graph of the MCL run")
    parser.add_argument("--no-presort", dest="presort", action="store_false",
                        help="count every graph in its own numbering (no degree presort)")
    args = parser.parse_args()
    rows: List[Dict] = []
    with spgemm.Client(args.address, timeout=1800, progress=False) as client:
        for name in args.graphs:
            path = os.path.join(args.matrices, name + ".mtx.gz")
            if not os.path.exists(path):
                print("skipped %s: not in %s" % (name, args.matrices), file=sys.stderr)
                continue
            rows.append(bench_graph(client, name, read_adjacency(path, undirected=True), args))
            print(rows[-1], file=sys.stderr, flush=True)
        for spec in args.generated:
            with undirected_on_server(client, args.cli, spec) as s:
                rows.append(bench_graph(client, spec, s.fetch(), args, stored=s))
            print(rows[-1], file=sys.stderr, flush=True)
        if args.mcl:
            rows.append(bench_mcl(client, args.mcl, read_adjacency(os.path.join(args.matrices, args.mcl + ".mtx.gz"),
                                                                   undirected=True)))
            print(rows[-1], file=sys.stderr, flush=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, COLUMNS, delimiter="\t", lineterminator="\n", restval="")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("%.4g" % v if isinstance(v, float) else v) for k, v in r.items()})
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
