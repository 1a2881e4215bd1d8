"""The graph algorithms (spgemm.algorithms) through the server, on graphs networkx generates
and on the shared real graphs, the graph local or already on the server: triangle counts
against networkx's, BFS levels against its shortest path lengths, Markov clusters against
the planted communities and a scipy MCL of the same steps, all-pairs shortest paths against
scipy.sparse.csgraph; and the worked examples (client/python/examples/graph) that run them
from the command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from scipy.sparse import csgraph

import spgemm
from conftest import REPO, matrices_dir, missing
from spgemm.algorithms import bfs_levels, markov_clustering, shortest_paths, skewed_degree_order, triangle_count

# The examples beside the tests: in the source tree, or as bench/package_device.sh --graph lays them out.
EXAMPLES = next((p for p in (REPO / "client" / "python" / "examples" / "graph",
                             Path(__file__).resolve().parents[1] / "examples" / "graph") if p.is_dir()), None)
if EXAMPLES is not None:
    sys.path.insert(0, str(EXAMPLES))

from graphs import adjacency_of, read_adjacency  # noqa: E402

nx = pytest.importorskip("networkx")


def shared_graph(name: str, **kw) -> sp.csr_array:
    path = matrices_dir() / (name + ".mtx.gz")
    if not path.exists():
        missing("%s not found in %s (set SPGEMM_MATRICES)" % (path.name, matrices_dir()))
    return read_adjacency(str(path), **kw)


def networkx_triangles(a: sp.sparray) -> int:
    return sum(nx.triangles(nx.from_scipy_sparse_array(a)).values()) // 3


# -- triangles ----------------------------------------------------------------


@pytest.mark.parametrize("g", [nx.gnp_random_graph(300, 0.05, seed=1), nx.powerlaw_cluster_graph(500, 6, 0.3, seed=2),
                               nx.complete_graph(12), nx.empty_graph(5)], ids=["gnp", "powerlaw", "complete", "empty"])
def test_triangles_of_generated_graphs(client: spgemm.Client, g) -> None:
    a = adjacency_of(g)
    assert triangle_count(client, a) == sum(nx.triangles(g).values()) // 3


@pytest.mark.parametrize("name", ["ca-CondMat", "email-Enron", "wiki-Vote"])
def test_triangles_of_shared_graphs(client: spgemm.Client, name: str) -> None:
    a = shared_graph(name, undirected=True)
    assert triangle_count(client, a) == networkx_triangles(a)


def test_presorting_a_skewed_graph_keeps_its_triangles(client: spgemm.Client) -> None:
    a = shared_graph("wiki-Vote", undirected=True)
    order = skewed_degree_order(a)
    assert order is not None, "wiki-Vote's hubs make its degrees skewed"
    assert np.all(np.diff(np.diff(a.indptr)[order]) <= 0)
    assert triangle_count(client, a) == triangle_count(client, a, presort=False)


def test_uniform_degrees_keep_their_numbering() -> None:
    grid = nx.convert_node_labels_to_integers(nx.grid_2d_graph(40, 40))
    assert skewed_degree_order(adjacency_of(grid)) is None
    assert skewed_degree_order(sp.csr_array((0, 0))) is None


# -- BFS ----------------------------------------------------------------------


def networkx_levels(a: sp.sparray, sources, hops=None) -> np.ndarray:
    g = nx.from_scipy_sparse_array(a, create_using=nx.DiGraph)
    out = np.full((len(sources), a.shape[0]), -1)
    for i, s in enumerate(sources):
        for v, d in nx.single_source_shortest_path_length(g, s, cutoff=hops).items():
            out[i, v] = d
    return out


def test_bfs_levels_of_a_generated_digraph(client: spgemm.Client) -> None:
    a = adjacency_of(nx.gnp_random_graph(250, 0.015, directed=True, seed=3))
    sources = [0, 7, 7, 120]
    np.testing.assert_array_equal(bfs_levels(client, a, sources), networkx_levels(a, sources))
    np.testing.assert_array_equal(bfs_levels(client, a, sources, hops=2), networkx_levels(a, sources, 2))


def test_bfs_levels_of_a_shared_graph(client: spgemm.Client) -> None:
    a = shared_graph("p2p-Gnutella31")
    sources = [0, 1000, 31337]
    np.testing.assert_array_equal(bfs_levels(client, a, sources), networkx_levels(a, sources))


# -- Markov clustering ---------------------------------------------------------


def reference_mcl(a: sp.sparray, inflation: float = 2.0, prune: float = 1e-4, tolerance: float = 1e-8,
                  max_iterations: int = 100) -> np.ndarray:
    """MCL by scipy with the same steps and (default) parameters: the reference."""
    n = a.shape[0]
    m = sp.csr_array(a.maximum(a.T) + sp.identity(n, format="csr"))

    def normalize(x):
        return sp.csr_array(x @ sp.diags(1.0 / np.asarray(x.sum(axis=0)).ravel()))

    m = normalize(m)
    for _ in range(max_iterations):
        x = sp.csr_array(m @ m).power(inflation)
        x.data[x.data < prune] = 0
        x.eliminate_zeros()
        x = normalize(x)
        moved = abs(x - m).max()
        m = x
        if moved <= tolerance:
            break
    dense = m.toarray()
    return dense.argmax(axis=0)


def same_partition(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether two labelings group the vertices alike (labels themselves may differ)."""
    pairs = set(zip(x.tolist(), y.tolist()))
    return len(pairs) == len(set(x.tolist())) == len(set(y.tolist()))


def test_markov_clusters_find_planted_communities(client: spgemm.Client) -> None:
    g = nx.planted_partition_graph(5, 20, 0.6, 0.02, seed=4)
    a = adjacency_of(g)
    labels = markov_clustering(client, a)
    planted = np.repeat(np.arange(5), 20)
    assert same_partition(labels, planted)
    np.testing.assert_array_equal(labels, reference_mcl(a))


def test_markov_clusters_of_a_shared_graph(client: spgemm.Client) -> None:
    a = shared_graph("hep-th", undirected=True)
    a.data[:] = 1.0
    assert same_partition(markov_clustering(client, a), reference_mcl(a))


# -- all-pairs shortest paths --------------------------------------------------


def test_shortest_paths_of_a_generated_weighted_digraph(client: spgemm.Client) -> None:
    g = nx.gnp_random_graph(60, 0.07, directed=True, seed=5)
    rng = np.random.default_rng(5)
    for u, v in g.edges:
        g.edges[u, v]["weight"] = float(rng.integers(1, 10))
    a = adjacency_of(g)
    np.testing.assert_array_equal(shortest_paths(client, a),
                                  csgraph.shortest_path(a, method="D", directed=True))


def test_shortest_paths_of_a_shared_matrix(client: spgemm.Client) -> None:
    a = abs(shared_graph("mbeacxc"))
    np.testing.assert_allclose(shortest_paths(client, a),
                               csgraph.shortest_path(a, method="D", directed=True), rtol=1e-12)


# -- the graph already on the server -------------------------------------------


def test_a_graph_on_the_server_gives_the_same_results_and_stays(client: spgemm.Client) -> None:
    g = nx.powerlaw_cluster_graph(400, 5, 0.3, seed=6)
    a = adjacency_of(g)
    with client.upload(a) as ra:
        before = {m.handle for m in client.list()}
        assert triangle_count(client, ra) == triangle_count(client, a) == sum(nx.triangles(g).values()) // 3
        assert triangle_count(client, ra.handle, presort=False) == triangle_count(client, a)
        np.testing.assert_array_equal(bfs_levels(client, ra, [0, 5], hops=3), bfs_levels(client, a, [0, 5], hops=3))
        np.testing.assert_array_equal(markov_clustering(client, ra), markov_clustering(client, a))
        np.testing.assert_array_equal(shortest_paths(client, ra), shortest_paths(client, a))
        assert {m.handle for m in client.list()} == before, "an algorithm left matrices behind or took its input"


def test_a_skewed_graph_on_the_server_is_presorted_there(client: spgemm.Client) -> None:
    a = shared_graph("wiki-Vote", undirected=True)
    assert skewed_degree_order(a) is not None
    with client.upload(a) as ra:
        assert triangle_count(client, ra) == triangle_count(client, ra, presort=False) == networkx_triangles(a)


def test_bfs_refuses_a_source_outside_the_graph(client: spgemm.Client) -> None:
    a = adjacency_of(nx.path_graph(5))
    with pytest.raises(ValueError, match="outside the graph"):
        bfs_levels(client, a, [5])


# -- the worked examples --------------------------------------------------------


@pytest.mark.parametrize("script, args, expected", [
    ("triangle_count.py", [], "10 vertices, 45 edges, 120 triangles"),
    ("bfs.py", ["0", "3"], "source 0: 10 vertices reached, 2 levels"),
    ("markov_clustering.py", [], "10 vertices in 1 clusters (largest 10)"),
    ("shortest_paths.py", [], "10 vertices; 100 of 100 pairs connected; longest shortest path 1"),
])
def test_the_examples_run_from_the_command_line(server_address: str, tmp_path: Path, script: str, args, expected: str) -> None:
    if EXAMPLES is None:
        pytest.skip("the worked examples are not beside the tests")
    graph = tmp_path / "k10.mtx"
    scipy.io.mmwrite(str(graph), sp.coo_matrix(adjacency_of(nx.complete_graph(10))))
    out = subprocess.run([sys.executable, str(EXAMPLES / script), str(graph), *args, "--address", server_address],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert expected in out.stdout, out.stdout
