#!/usr/bin/env python3
"""All-pairs shortest paths on an spgemmd server over the min_plus semiring: D starts as the
edge weights with a zero diagonal, and D = D min.+ D (each squaring doubles the hops a path
may take) until D stops changing, after at most ceil(log2(n)) squarings.

    python shortest_paths.py GRAPH.mtx[.gz] [--address localhost:50051]
"""

from __future__ import annotations

import argparse

import numpy as np
import scipy.sparse as sp

import spgemm
from graphs import read_adjacency


def shortest_paths(client: spgemm.Client, a: sp.sparray) -> np.ndarray:
    """dist[i, j]: the least total weight of a path i -> j along A's edges (weights >= 0),
    inf where there is none."""
    n = a.shape[0]
    zero_diagonal = sp.csr_array((np.zeros(n), (np.arange(n), np.arange(n))), shape=(n, n))
    with client.upload(a) as ra, client.upload(zero_diagonal) as rz:
        d = ra.ewise_add(rz, "min")
        try:
            for _ in range(max(1, int(np.ceil(np.log2(max(n, 2))))) + 1):
                step = d.mxm(d, "min_plus")
                with step.ewise_mult(d, "ne") as differs:
                    changed = step.nnz != d.nnz or (differs.reduce_scalar("max") or 0.0) > 0
                d.delete()
                d = step
                if not changed:
                    break
            dist = d.fetch()
        finally:
            d.delete()
    out = np.full((n, n), np.inf)
    coo = dist.tocoo()
    out[coo.row, coo.col] = coo.data
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", help="a Matrix Market file (directed as stored; weights >= 0)")
    parser.add_argument("--address", help="the server (default: SPGEMM_SERVER, else localhost:50051)")
    args = parser.parse_args()
    a = read_adjacency(args.graph)
    with spgemm.Client(args.address) as client:
        dist = shortest_paths(client, abs(a))
    reachable = np.isfinite(dist)
    print("%d vertices; %d of %d pairs connected; longest shortest path %.6g"
          % (a.shape[0], reachable.sum(), dist.size, dist[reachable].max()))


if __name__ == "__main__":
    main()
