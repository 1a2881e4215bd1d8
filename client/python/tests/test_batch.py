"""Batch jobs (spgemm.batch and `spgemm batch`): chains run and written, a run resumed
where the last stopped, UNAVAILABLE servers retried on the next, failures reported while
other chains go on, whole graph algorithms as jobs, chains as tasks of a Dask
LocalCluster, the CLI's subcommand."""

from __future__ import annotations

import csv
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from scipy.sparse import csgraph

import spgemm
from conftest import REPO
from spgemm import batch


def closed_address() -> str:
    """127.0.0.1 and a port nothing listens on (gRPC: UNAVAILABLE)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


def graph(n: int, seed: int) -> sp.csr_array:
    """A symmetric random graph without self loops, values 1."""
    a = sp.random(n, n, density=0.05, format="csr", random_state=seed)
    a = sp.csr_array(((a + a.T) > 0).astype(np.float64))
    a.setdiag(0)
    a.eliminate_zeros()
    return a


def triangles(a: sp.csr_array) -> float:
    l = sp.tril(a, -1, format="csr")
    return float(((l @ l).multiply(l)).sum())


@pytest.fixture
def job_file(tmp_path: Path, server_address: str):
    a = graph(150, 1)
    b = sp.csr_array(sp.random(80, 60, density=0.1, format="csr", random_state=2))
    scipy.io.mmwrite(str(tmp_path / "A.mtx"), a)
    scipy.io.mmwrite(str(tmp_path / "B.mtx"), b)

    def write(servers, extra_jobs: str = "") -> Path:
        path = tmp_path / "jobs.yaml"
        path.write_text(
            "servers: [%s]\nconcurrency: 2\nretries: 2\nsummary: out/summary.tsv\n"
            "inputs: {A: A.mtx, B: B.mtx}\n"
            "jobs:\n"
            "  - {name: L, op: select, a: A, selector: tril, thunk: -1}\n"
            "  - {name: T, op: mxm, a: L, b: L, semiring: plus_pair, mask: L, output: out/T.mtx.gz}\n"
            "  - {name: count, op: reduce_scalar, a: T}\n"
            "  - {name: C, op: multiply, a: B, b: B.T, output: out/C.npz}\n"
            "  - {name: S, op: reduce_rowwise, a: B, monoid: max, output: out/S.mtx}\n" % ", ".join(servers)
            + extra_jobs
        )
        return path

    return write, a, b


def by_job(results):
    return {r.job: r for r in results}


def test_chains_run_write_their_outputs_and_resume(job_file, server_address: str, tmp_path: Path) -> None:
    write, a, b = job_file
    plan = batch.load(str(write([server_address])))
    assert sorted(len(c) for c in batch.chains(plan)) == [1, 1, 3]
    got = by_job(batch.run(plan, progress=False))
    assert {r.status for r in got.values()} == {"done"}
    assert got["count"].value == triangles(a)
    c = sp.load_npz(str(tmp_path / "out" / "C.npz"))
    np.testing.assert_allclose(c.toarray(), (b @ b.T).toarray(), rtol=1e-12)
    s = scipy.io.mmread(str(tmp_path / "out" / "S.mtx"))
    np.testing.assert_array_equal(np.asarray(s.todense()).ravel()[np.diff(b.indptr) > 0],
                                  np.asarray(b.max(axis=1).todense()).ravel()[np.diff(b.indptr) > 0])
    with open(tmp_path / "out" / "summary.tsv") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert [r["job"] for r in rows] == ["L", "T", "count", "C", "S"]
    assert rows[3]["nnz"] == str(c.nnz) and float(rows[3]["time_ms"]) > 0 and rows[3]["server"] == server_address
    # Resumed: the written outputs skip their jobs; the count (no output) runs again on T's file.
    got = by_job(batch.run(batch.load(str(write([server_address]))), progress=False))
    assert {j: r.status for j, r in got.items()} == {"L": "skipped", "T": "skipped", "count": "done", "C": "skipped",
                                                       "S": "skipped"}
    assert got["count"].value == triangles(a)
    os.remove(tmp_path / "out" / "C.npz")
    got = by_job(batch.run(batch.load(str(write([server_address]))), progress=False))
    assert got["C"].status == "done" and got["S"].status == "skipped"
    assert not [p for p in os.listdir(tmp_path / "out") if p.startswith(".")]  # no partial files


def test_unavailable_servers_are_retried_on_the_next(job_file, server_address: str, tmp_path: Path) -> None:
    write, a, _ = job_file
    got = batch.run(batch.load(str(write([closed_address(), server_address]))), progress=False)
    assert {r.status for r in got} == {"done"}
    assert {r.server for r in got} == {server_address}
    assert max(r.attempts for r in got) == 2  # chains that started on the closed port
    shutil.rmtree(tmp_path / "out")
    failed = batch.run(batch.load(str(write([closed_address()]))), progress=False)
    assert {r.status for r in failed} == {"failed"}
    assert {r.attempts for r in failed} == {3}  # the first try and two retries


def test_a_failure_is_reported_while_other_chains_go_on(job_file, server_address: str, tmp_path: Path) -> None:
    write, _, _ = job_file
    path = write([server_address], "  - {name: X, op: mxm, a: B, b: B.T, semiring: min_foo}\n")
    got = by_job(batch.run(batch.load(str(path)), progress=False))
    assert got["X"].status == "failed" and "min_foo" in got["X"].error
    assert got["C"].status == "done" and got["count"].status == "done"
    assert batch.main([str(path), "--no-progress"]) == 1


def test_graph_algorithms_run_as_jobs_and_write_arrays(job_file, server_address: str, tmp_path: Path) -> None:
    write, a, _ = job_file
    path = write([server_address],
                 "  - {name: tc, op: triangle_count, a: A, output: out/tc.txt}\n"
                 "  - {name: levels, op: bfs, a: A, sources: [0, 3], hops: 2, output: out/levels.npy}\n"
                 "  - {name: clusters, op: markov_clustering, a: A, inflation: 2.5, output: out/clusters.tsv}\n"
                 "  - {name: dist, op: shortest_paths, a: L, output: out/dist.csv}\n")
    got = by_job(batch.run(batch.load(str(path)), progress=False))
    assert {r.status for r in got.values()} == {"done"}, [r.error for r in got.values()]
    assert got["tc"].value == triangles(a) == float((tmp_path / "out" / "tc.txt").read_text())
    levels = np.load(tmp_path / "out" / "levels.npy")
    hops = csgraph.shortest_path(a, unweighted=True, indices=[0, 3])
    np.testing.assert_array_equal(levels, np.where(hops <= 2, hops, -1).astype(np.int64))
    labels = np.loadtxt(tmp_path / "out" / "clusters.tsv", dtype=np.int64)
    assert labels.shape == (a.shape[0],) and set(labels) <= set(range(a.shape[0]))
    dist = np.loadtxt(tmp_path / "out" / "dist.csv", delimiter=",")
    np.testing.assert_array_equal(dist, csgraph.shortest_path(sp.tril(a, -1, format="csr"), directed=True))
    rows = list(csv.DictReader(open(tmp_path / "out" / "summary.tsv"), delimiter="\t"))
    assert {r["job"]: r["output"] for r in rows}["levels"].endswith("levels.npy")


def poisson2d(n: int) -> sp.csr_array:
    t = sp.diags_array([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], offsets=[-1, 0, 1], format="csr")
    i = sp.identity(n, format="csr")
    return sp.csr_array(sp.kron(t, i) + sp.kron(i, t))


def test_amg_setup_and_solves_run_as_jobs(server_address: str, tmp_path: Path) -> None:
    a = poisson2d(40)
    rng = np.random.default_rng(3)
    b1, b2 = rng.standard_normal(a.shape[0]), rng.standard_normal(a.shape[0])
    scipy.io.mmwrite(str(tmp_path / "A.mtx"), a)
    np.save(tmp_path / "b1.npy", b1)
    np.savetxt(tmp_path / "b2.txt", b2, fmt="%.17g")
    path = tmp_path / "jobs.yaml"
    path.write_text(
        "servers: [%s]\nsummary: out/summary.tsv\n"
        "inputs: {A: A.mtx, b1: b1.npy, b2: b2.txt}\n"
        "jobs:\n"
        "  - {name: H, op: amg, a: A, max_coarse: 100, output: out/levels.tsv}\n"
        "  - {name: x1, op: amg_solve, h: H, b: b1, tol: 1.0e-10, output: out/x1.npy}\n"
        "  - {name: x2, op: amg_solve, h: H, b: b2, tol: 1.0e-10, output: out/x2.csv}\n" % server_address)
    got = by_job(batch.run(batch.load(str(path)), progress=False))
    assert {r.status for r in got.values()} == {"done"}, [r.error for r in got.values()]
    for name, b in (("x1.npy", b1), ("x2.csv", b2)):
        x = batch.read_array(str(tmp_path / "out" / name))
        assert np.linalg.norm(b - a @ x) <= 1e-9 * np.linalg.norm(b)
    assert got["x1"].value > 0 and got["H"].value >= 1.0  # iterations; operator complexity
    levels = np.loadtxt(tmp_path / "out" / "levels.tsv", dtype=np.int64, ndmin=2)
    assert levels[0].tolist()[:3] == [0, a.shape[0], a.nnz] and len(levels) >= 2 and levels[-1, 1] <= 100
    assert (tmp_path / "out" / "levels.tsv").read_text().startswith("# level rows nnz block_size")
    # A solve whose output is missing sets its hierarchy up again, though the levels' table exists.
    (tmp_path / "out" / "x1.npy").unlink()
    again = by_job(batch.run(batch.load(str(path)), progress=False))
    assert [again[j].status for j in ("H", "x1", "x2")] == ["done", "done", "skipped"]
    with spgemm.Client(server_address) as client:
        assert client.list() == []  # the hierarchies and matrices of both runs deleted


def test_bad_job_files_are_refused(tmp_path: Path) -> None:
    for jobs in ["  - {name: X, op: frobnicate, a: A}\n", "  - {name: X, op: select, a: Z}\n",
                 "  - {name: A, op: select, a: A}\n", "  - {op: select, a: A}\n",
                 # an algorithm's result is no operand, and it writes arrays
                 "  - {name: N, op: triangle_count, a: A}\n  - {name: X, op: select, a: N}\n",
                 "  - {name: N, op: bfs, a: A, sources: [0], output: n.mtx}\n",
                 # a solve takes a hierarchy and an array; a setup a matrix
                 "  - {name: X, op: amg_solve, h: A, b: A}\n",
                 "  - {name: H, op: amg, a: A}\n  - {name: X, op: amg_solve, h: H, b: H}\n",
                 "  - {name: H, op: amg, a: A}\n  - {name: X, op: select, a: H}\n"]:
        with pytest.raises(ValueError):
            batch.plan_of(__import__("yaml").safe_load("inputs: {A: a.mtx}\njobs:\n" + jobs))


def test_chains_run_as_tasks_of_a_dask_local_cluster(job_file, server_address: str) -> None:
    distributed = pytest.importorskip("distributed")
    write, a, _ = job_file
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as dask:
            got = by_job(batch.run(batch.load(str(write([server_address]))), dask=dask, progress=False,
                                   post=lambda name, m: float(m.nnz) if hasattr(m, "nnz") else m))
            workers = set(dask.run(os.getpid).values())
    assert {r.status for r in got.values()} == {"done"}
    assert got["count"].value == triangles(a)
    assert got["C"].value == got["C"].nnz  # `post` ran on a worker, with the result fetched there
    assert len(workers) == 2 and os.getpid() not in workers


def test_the_cli_subcommand_runs_the_same(job_file, server_address: str, tmp_path: Path) -> None:
    cli = REPO / "build" / "client" / "spgemm"
    if not cli.exists():
        pytest.skip("the spgemm CLI is not built at %s" % cli)
    write, a, _ = job_file
    env = dict(os.environ, SPGEMM_PYTHON=sys.executable)
    p = subprocess.run([str(cli), "--server", server_address, "batch", str(write(["nowhere:1"])), "--no-progress"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "5 done, 0 skipped, 0 failed" in p.stderr
    assert (tmp_path / "out" / "summary.tsv").exists()
