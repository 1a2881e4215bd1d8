#!/usr/bin/env python3
"""Multi-source breadth-first search on an spgemmd server: the frontiers of k sources at
once, one row each, advanced by q<!v> = q A over lor_land, the complemented mask of the
vertices visited so far keeping every vertex to its first level; the levels collected on
the server. With --hops H, the vertices within H hops (k-hop reachability).

    python bfs.py GRAPH.mtx[.gz] SOURCE... [--hops H] [--address localhost:50051]
"""

from __future__ import annotations

import argparse
from typing import Optional, Sequence

import numpy as np
import scipy.sparse as sp

import spgemm
from graphs import read_adjacency


def bfs_levels(client: spgemm.Client, a: sp.sparray, sources: Sequence[int],
               hops: Optional[int] = None) -> np.ndarray:
    """levels[i, v]: the hops from sources[i] to v along A's edges (i -> j where A has (i, j)),
    -1 where v is not reached (within `hops`)."""
    n = a.shape[0]
    k = len(sources)
    start = sp.csr_array((np.ones(k), (np.arange(k), np.asarray(sources))), shape=(k, n))
    pattern = sp.csr_array((np.ones(a.nnz), a.indices, a.indptr), shape=a.shape)  # every edge true
    with client.upload(pattern) as ra:
        frontier = client.upload(start)
        visited = client.upload(start)
        levels = frontier.apply("times", 0)  # level 0: the sources (entries of value 0)
        level = 0
        try:
            while hops is None or level < hops:
                step = frontier.mxm(ra, "lor_land", mask=visited, complement=True)
                frontier.delete()
                frontier = step
                if frontier.nnz == 0:
                    break
                level += 1
                grown = visited.ewise_add(frontier, "lor")
                visited.delete()
                visited = grown
                with frontier.apply("times", level) as stamped:
                    grown = levels.ewise_add(stamped, "first")
                levels.delete()
                levels = grown
            reached = levels.fetch()
        finally:
            for m in (frontier, visited, levels):
                m.delete()
    out = np.full((k, n), -1, dtype=np.int64)
    coo = reached.tocoo()
    out[coo.row, coo.col] = coo.data.astype(np.int64)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", help="a Matrix Market file (directed as stored)")
    parser.add_argument("sources", type=int, nargs="+", help="source vertices (0-based)")
    parser.add_argument("--hops", type=int, help="at most this many hops")
    parser.add_argument("--address", help="the server (default: SPGEMM_SERVER, else localhost:50051)")
    args = parser.parse_args()
    a = read_adjacency(args.graph)
    with spgemm.Client(args.address) as client:
        levels = bfs_levels(client, a, args.sources, args.hops)
    for s, row in zip(args.sources, levels):
        reached = row >= 0
        print("source %d: %d vertices reached, %d levels" % (s, reached.sum(), row.max() + 1))


if __name__ == "__main__":
    main()
