"""Graphs for the worked examples: Matrix Market files as adjacency matrices, and the
graphs networkx generates (its generators are the examples' generated inputs)."""

from __future__ import annotations

import gzip

import numpy as np
import scipy.io
import scipy.sparse as sp


def read_adjacency(path: str, *, undirected: bool = False) -> sp.csr_array:
    """A Matrix Market file as an adjacency matrix: square, self loops dropped, values as
    stored (pattern files: 1), symmetric files expanded; `undirected` adds every edge's reverse."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        m = sp.csr_array(scipy.io.mmread(f), dtype=np.float64)
    if m.shape[0] != m.shape[1]:
        raise ValueError("%s is %d x %d, not a graph's adjacency matrix" % (path, *m.shape))
    m.sum_duplicates()
    if undirected:
        m = sp.csr_array(m.maximum(m.T))
    m.setdiag(0)
    m.eliminate_zeros()
    return m


def adjacency_of(g) -> sp.csr_array:
    """A networkx graph's adjacency matrix (edge attribute `weight`, else 1), nodes 0 .. n-1."""
    import networkx as nx

    return sp.csr_array(nx.to_scipy_sparse_array(g, nodelist=range(g.number_of_nodes()), dtype=np.float64,
                                                 format="csr"))
