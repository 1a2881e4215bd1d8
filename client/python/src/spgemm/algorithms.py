"""Graph algorithms on an spgemmd server, every step on kept handles, as LAGraph runs
them with GraphBLAS: triangle counting, multi-source breadth-first search, Markov
clustering and all-pairs shortest paths.

Each takes the graph as a local scipy.sparse matrix (uploaded for the call) or as a
matrix already on the server (a RemoteMatrix or its handle: it stays there, and only
vectors come back where a step needs them here), and returns numpy results. The batch
runner's jobs of the same names call them (:mod:`spgemm.batch`)::

    with spgemm.Client() as client:
        n = spgemm.algorithms.triangle_count(client, a)
        levels = spgemm.algorithms.bfs_levels(client, a, [0, 17])
        labels = spgemm.algorithms.markov_clustering(client, a, inflation=2.0)
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Iterator, Optional, Sequence

import numpy as np
import scipy.sparse as sp

from .graph import transposed

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client, RemoteMatrix

__all__ = ["triangle_count", "bfs_levels", "markov_clustering", "shortest_paths", "skewed_degree_order", "relabeled"]


@contextlib.contextmanager
def _on_server(client: "Client", a: Any) -> Iterator["RemoteMatrix"]:
    """`a` as a matrix on the server: a local one uploaded for the block (deleted after
    it), a remote one or a handle as it is."""
    if isinstance(a, str):
        yield client.matrix(a)
    elif _remote(a):
        yield a
    else:
        with client.upload(sp.csr_array(a)) as ra:
            yield ra


def _remote(a: Any) -> bool:
    from .client import RemoteMatrix

    return isinstance(a, (str, RemoteMatrix))


def _identity(n: int, value: float = 1.0) -> sp.csr_array:
    return sp.csr_array((np.full(n, value), (np.arange(n), np.arange(n))), shape=(n, n))


def _dense(m: sp.sparray, shape: tuple, fill: float, dtype: Any) -> np.ndarray:
    """A sparse result as a dense array, `fill` where it has no entry."""
    out = np.full(shape, fill, dtype=dtype)
    coo = sp.coo_array(m)
    out[coo.row, coo.col] = coo.data
    return out


# -- triangles ----------------------------------------------------------------


def _skewed_order(degrees: np.ndarray) -> Optional[np.ndarray]:
    if degrees.size == 0:
        return None
    cut = max(degrees.size - 1000, 0)
    largest = np.partition(degrees, cut)[cut:]
    if largest.mean() <= 4 * degrees.mean():
        return None
    return np.argsort(-degrees, kind="stable")


def skewed_degree_order(a: sp.sparray) -> Optional[np.ndarray]:
    """The vertices of the undirected graph `a` by decreasing degree where its degrees are
    skewed (the mean of the 1,000 largest above 4 times the mean degree, the test LAGraph's
    triangle count makes before it presorts), else None. Numbered so, a vertex's entries in
    the strictly lower triangle are its edges to vertices of higher degree: no row of L is
    longer than about sqrt(2 m), where a power-law graph's hubs would otherwise give rows
    and columns of tens of thousands."""
    return _skewed_order(np.diff(sp.csr_array(a).indptr))


def relabeled(a: sp.sparray, order: np.ndarray) -> sp.csr_array:
    """`a` with its vertices numbered as `order` lists them (order[new] = old)."""
    a = sp.csr_array(a)
    return sp.csr_array(a[order][:, order])


def _remote_degrees(ra: "RemoteMatrix") -> np.ndarray:
    """Entries per row of a matrix on the server (only the n-vector comes back)."""
    n = ra.shape[0]
    with ra.apply("one") as pattern, pattern.reduce_rowwise("plus") as counts:
        return _dense(counts.fetch(), (n, 1), 0.0, np.float64).ravel()


def triangle_count(client: "Client", a: Any, *, presort: bool = True) -> int:
    """Triangles of the undirected graph of `a` (symmetric; its values and diagonal do not
    matter): the sum of C<L> = L L over plus_pair, L its strictly lower triangle (Sandia's
    "LL" method), each triangle k < j < i counted once, at (i, j). `presort`: where the
    degrees are skewed, the vertices are first numbered by decreasing degree (the count is
    the same, the masked product's work a fraction; on the server, P A P^T, for a remote `a`)."""
    with contextlib.ExitStack() as held:
        if presort and not _remote(a):
            order = skewed_degree_order(a)
            ra = held.enter_context(_on_server(client, relabeled(a, order) if order is not None else a))
        else:
            ra = held.enter_context(_on_server(client, a))
            order = _skewed_order(_remote_degrees(ra)) if presort else None
            if order is not None:
                n = ra.shape[0]
                p = sp.csr_array((np.ones(n), (np.arange(n), order)), shape=(n, n))
                ra = held.enter_context(client.galerkin(p, ra, "papt", keep=True))
        l = held.enter_context(ra.select("tril", -1))
        c = held.enter_context(l.mxm(l, "plus_pair", mask=l))
        return int(c.reduce_scalar() or 0)


# -- breadth-first search -----------------------------------------------------


def bfs_levels(client: "Client", a: Any, sources: Sequence[int], *, hops: Optional[int] = None) -> np.ndarray:
    """levels[i, v]: the hops from sources[i] to v along A's edges (i -> j where A has
    (i, j)), -1 where v is not reached (within `hops`). The k frontiers advance at once, one
    row each, by q<!v> = q A over lor_land, the complemented mask of the vertices visited so
    far keeping every vertex to its first level; the levels are collected on the server."""
    with _on_server(client, a) as ra:
        n = ra.shape[0]
        k = len(sources)
        if k and (min(sources) < 0 or max(sources) >= n):
            raise ValueError("spgemm: a source is outside the graph's %d vertices" % n)
        start = sp.csr_array((np.ones(k), (np.arange(k), np.asarray(sources, dtype=np.int64))), shape=(k, n))
        with ra.apply("one") as pattern:  # every edge true
            frontier = client.upload(start)
            visited = client.upload(start)
            levels = frontier.apply("times", 0)  # level 0: the sources (entries of value 0)
            level = 0
            try:
                while hops is None or level < hops:
                    step = frontier.mxm(pattern, "lor_land", mask=visited, complement=True)
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
    return _dense(reached, (k, n), -1, np.int64)


# -- Markov clustering --------------------------------------------------------


def _normalized(m: "RemoteMatrix") -> "RemoteMatrix":
    """Each column divided by its sum (a column-stochastic matrix)."""
    with m.reduce_columnwise() as sums:
        return m.scale_columns(sums, "div")


def markov_clustering(client: "Client", a: Any, *, inflation: float = 2.0, prune: float = 1e-4,
                      tolerance: float = 1e-8, max_iterations: int = 100) -> np.ndarray:
    """A cluster label per vertex of the undirected graph of `a` (weights >= 0) by MCL (van
    Dongen 2000): from the column-stochastic matrix of max(A, A^T) with self loops added,
    repeat expansion (M M), inflation (every entry to the power `inflation`), pruning
    (entries below `prune` dropped) and column normalization until no entry moves more than
    `tolerance` (at most `max_iterations` times); a vertex's label is the attractor (a
    vertex) whose row holds its column's largest entry."""
    with _on_server(client, a) as ra:
        n = ra.shape[0]
        with ra.ewise_add(transposed(ra), "max") as undirected, client.upload(_identity(n)) as eye, \
                undirected.ewise_add(eye, "plus") as with_loops:
            m = _normalized(with_loops)
        try:
            for _ in range(max_iterations):
                with m.mxm(m) as expanded, expanded.apply("pow", inflation) as inflated, \
                        inflated.select("valuege", prune) as pruned:
                    step = _normalized(pruned)
                with step.ewise_add(m, "minus") as change:
                    moved = max(abs(change.reduce_scalar("max") or 0.0), abs(change.reduce_scalar("min") or 0.0))
                m.delete()
                m = step
                if moved <= tolerance:
                    break
            with m.top_k(1, columns=True) as attractors:
                coo = sp.coo_array(attractors.fetch())
        finally:
            m.delete()
    labels = np.arange(n)
    labels[coo.col] = coo.row
    return labels


# -- shortest paths -----------------------------------------------------------


def shortest_paths(client: "Client", a: Any) -> np.ndarray:
    """dist[i, j]: the least total weight of a path i -> j along A's edges (weights >= 0),
    inf where there is none: D starts as the weights with a zero diagonal, and D = D min.+ D
    (each squaring doubles the hops a path may take) until it stops changing, after at most
    ceil(log2(n)) squarings."""
    with _on_server(client, a) as ra:
        n = ra.shape[0]
        with client.upload(_identity(n, 0.0)) as zero_diagonal:
            d = ra.ewise_add(zero_diagonal, "min")
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
    return _dense(dist, (n, n), np.inf, np.float64)
