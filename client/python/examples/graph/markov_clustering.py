#!/usr/bin/env python3
"""Markov clustering (MCL, van Dongen 2000) on an spgemmd server: from the column-stochastic
matrix of the graph with self loops, repeat expansion (M M), inflation (every entry to the
power r), pruning (entries below a threshold dropped) and column normalization until the
matrix stops changing; every vertex joins the attractor holding its column's largest entry.
Every step runs on the server, on kept handles.

    python markov_clustering.py GRAPH.mtx[.gz] [--inflation 2] [--address localhost:50051]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

import spgemm
from graphs import read_adjacency


@dataclass
class Mcl:
    inflation: float = 2.0
    prune: float = 1e-4  # entries below it dropped after inflation
    tolerance: float = 1e-8  # stop once no entry changes more than this
    max_iterations: int = 100


def normalized(m: spgemm.RemoteMatrix) -> spgemm.RemoteMatrix:
    """Each column divided by its sum (a column-stochastic matrix)."""
    with m.reduce_columnwise() as sums:
        return m.scale_columns(sums, "div")


def clusters(client: spgemm.Client, a: sp.sparray, p: Mcl = Mcl()) -> np.ndarray:
    """A cluster label per vertex of the undirected graph of `a`: the attractor (a vertex)
    whose row holds its column's largest entry at convergence."""
    n = a.shape[0]
    with_loops = sp.csr_array(a.maximum(a.T) + sp.identity(n, format="csr"))
    with client.upload(with_loops) as ra:
        m = normalized(ra)
        try:
            for _ in range(p.max_iterations):
                with m.mxm(m) as expanded, expanded.apply("pow", p.inflation) as inflated, \
                        inflated.select("valuege", p.prune) as pruned:
                    step = normalized(pruned)
                with step.ewise_add(m, "minus") as change:
                    moved = max(abs(change.reduce_scalar("max") or 0.0), abs(change.reduce_scalar("min") or 0.0))
                m.delete()
                m = step
                if moved <= p.tolerance:
                    break
            with m.top_k(1, columns=True) as attractors:
                coo = attractors.fetch().tocoo()
        finally:
            m.delete()
    labels = np.arange(n)
    labels[coo.col] = coo.row
    return labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", help="a Matrix Market file (made undirected)")
    parser.add_argument("--inflation", type=float, default=2.0)
    parser.add_argument("--address", help="the server (default: SPGEMM_SERVER, else localhost:50051)")
    args = parser.parse_args()
    a = read_adjacency(args.graph, undirected=True)
    with spgemm.Client(args.address) as client:
        labels = clusters(client, a, Mcl(inflation=args.inflation))
    sizes = np.bincount(np.unique(labels, return_inverse=True)[1])
    print("%d vertices in %d clusters (largest %d)" % (a.shape[0], len(sizes), sizes.max()))


if __name__ == "__main__":
    main()
