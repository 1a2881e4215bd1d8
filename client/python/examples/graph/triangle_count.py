#!/usr/bin/env python3
"""Triangle counting on an spgemmd server: the sum of C<L> = L L over plus_pair, L the
strictly lower triangle of the undirected graph (Sandia's "LL" method, as LAGraph runs it
with SuiteSparse:GraphBLAS): each triangle k < j < i is counted once, at (i, j), from the
wedge through k, and the mask keeps the product to L's entries. Where the degrees are skewed
the vertices are first numbered by decreasing degree, as LAGraph presorts: the count is the
same, the work of the masked product a fraction (graphs.skewed_degree_order).

    python triangle_count.py GRAPH.mtx[.gz] [--address localhost:50051]
"""

from __future__ import annotations

import argparse
import time

import spgemm
from graphs import read_adjacency


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", help="a Matrix Market file (made undirected)")
    parser.add_argument("--address", help="the server (default: SPGEMM_SERVER, else localhost:50051)")
    args = parser.parse_args()
    a = read_adjacency(args.graph, undirected=True)
    with spgemm.Client(args.address) as client:
        started = time.perf_counter()
        n = spgemm.algorithms.triangle_count(client, a)
        seconds = time.perf_counter() - started
    edges = a.nnz // 2
    print("%s: %d vertices, %d edges, %d triangles in %.3f s end to end (%.3g edges/s)"
          % (args.graph, a.shape[0], edges, n, seconds, edges / seconds))


if __name__ == "__main__":
    main()
