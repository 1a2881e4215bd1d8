#!/usr/bin/env python3
"""All-pairs shortest paths on an spgemmd server over the min_plus semiring: D starts as the
edge weights with a zero diagonal, and D = D min.+ D (each squaring doubles the hops a path
may take) until D stops changing, after at most ceil(log2(n)) squarings.

    python shortest_paths.py GRAPH.mtx[.gz] [--address localhost:50051]
"""

from __future__ import annotations

import argparse

import numpy as np

import spgemm
from graphs import read_adjacency


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", help="a Matrix Market file (directed as stored; weights >= 0)")
    parser.add_argument("--address", help="the server (default: SPGEMM_SERVER, else localhost:50051)")
    args = parser.parse_args()
    a = read_adjacency(args.graph)
    with spgemm.Client(args.address) as client:
        dist = spgemm.algorithms.shortest_paths(client, abs(a))
    reachable = np.isfinite(dist)
    print("%d vertices; %d of %d pairs connected; longest shortest path %.6g"
          % (a.shape[0], reachable.sum(), dist.size, dist[reachable].max()))


if __name__ == "__main__":
    main()
