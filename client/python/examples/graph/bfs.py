#!/usr/bin/env python3
"""Multi-source breadth-first search on an spgemmd server: the frontiers of k sources at
once, one row each, advanced by q<!v> = q A over lor_land, the complemented mask of the
vertices visited so far keeping every vertex to its first level; the levels collected on
the server. With --hops H, the vertices within H hops (k-hop reachability).

    python bfs.py GRAPH.mtx[.gz] SOURCE... [--hops H] [--address localhost:50051]
"""

from __future__ import annotations

import argparse

import spgemm
from graphs import read_adjacency


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", help="a Matrix Market file (directed as stored)")
    parser.add_argument("sources", type=int, nargs="+", help="source vertices (0-based)")
    parser.add_argument("--hops", type=int, help="at most this many hops")
    parser.add_argument("--address", help="the server (default: SPGEMM_SERVER, else localhost:50051)")
    args = parser.parse_args()
    a = read_adjacency(args.graph)
    with spgemm.Client(args.address) as client:
        levels = spgemm.algorithms.bfs_levels(client, a, args.sources, hops=args.hops)
    for s, row in zip(args.sources, levels):
        reached = row >= 0
        print("source %d: %d vertices reached, %d levels" % (s, reached.sum(), row.max() + 1))


if __name__ == "__main__":
    main()
