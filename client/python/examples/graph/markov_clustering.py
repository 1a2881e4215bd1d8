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

import numpy as np

import spgemm
from graphs import read_adjacency


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", help="a Matrix Market file (made undirected)")
    parser.add_argument("--inflation", type=float, default=2.0)
    parser.add_argument("--address", help="the server (default: SPGEMM_SERVER, else localhost:50051)")
    args = parser.parse_args()
    a = read_adjacency(args.graph, undirected=True)
    with spgemm.Client(args.address) as client:
        labels = spgemm.algorithms.markov_clustering(client, a, inflation=args.inflation)
    sizes = np.bincount(np.unique(labels, return_inverse=True)[1])
    print("%d vertices in %d clusters (largest %d)" % (a.shape[0], len(sizes), sizes.max()))


if __name__ == "__main__":
    main()
