"""Algebraic multigrid on the server, against pyamg, and new values for stored matrices.

The matrices are the engine's generators (poisson2d5, poisson3d7, elasticity3d),
uploaded by the spgemm CLI and downloaded here, so that pyamg sees the very
matrices the server's hierarchy is built from. pyamg runs with the server's
choices: max_coarse 1000, no candidate improvement, Chebyshev smoothing on
both sides, a dense coarse solve.
"""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import spgemm
from conftest import REPO, missing

pyamg = pytest.importorskip("pyamg")


def cli_binary() -> str:
    binary = os.environ.get("SPGEMM_CLI") or str(REPO / "build" / "client" / "spgemm")
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        missing("the spgemm CLI is not at %s (build it, or set SPGEMM_CLI)" % binary)
    return binary


def generated(client: spgemm.Client, spec: str) -> sp.csr_array:
    """The engine's generator `spec`, through the CLI's upload."""
    out = subprocess.run([cli_binary(), "--server", client.address, "upload", spec], check=True,
                         capture_output=True, text=True)
    handle = out.stdout.split()[0]
    try:
        return client.download(handle)
    finally:
        client.delete(handle)


def rigid_body_modes(n: int) -> np.ndarray:
    """elasticity3d:n's near null space: translations, then rotations about z, x, y (node-major unknowns)."""
    node = np.arange(n ** 3)
    x, y, z = node % n, node // n % n, node // (n * n)
    b = np.zeros((3 * n ** 3, 6))
    for c in range(3):
        b[c::3, c] = 1
    b[0::3, 3], b[1::3, 3] = -y, x
    b[1::3, 4], b[2::3, 4] = -z, y
    b[2::3, 5], b[0::3, 5] = -x, z
    return b


def pyamg_run(a: sp.csr_array, b: np.ndarray, block: int, modes):
    ml = pyamg.smoothed_aggregation_solver(
        sp.bsr_matrix(a, blocksize=(block, block)) if block > 1 else sp.csr_matrix(a),
        B=modes, max_coarse=1000, improve_candidates=None,
        presmoother=("chebyshev", {}), postsmoother=("chebyshev", {}), coarse_solver="pinv")
    residuals: list = []
    ml.solve(b, tol=1e-8, accel="cg", residuals=residuals)
    return ml, len(residuals) - 1


@pytest.mark.parametrize("spec,block", [("poisson2d5:150", 1), ("poisson3d7:24", 1), ("elasticity3d:12", 3)])
def test_the_hierarchy_matches_pyamgs(client: spgemm.Client, spec: str, block: int) -> None:
    a = generated(client, spec)
    n = int(spec.split(":")[1])
    modes = rigid_body_modes(n) if spec.startswith("elasticity") else None
    b = np.ones(a.shape[0])
    ml, pyamg_iterations = pyamg_run(a, b, block, modes)
    with client.amg(a, modes) as h:
        assert h.levels[0].rows == a.shape[0]
        assert h.levels[0].block_size == block
        assert abs(len(h.levels) - len(ml.levels)) <= 1, (h, ml)
        assert abs(h.operator_complexity / ml.operator_complexity() - 1) <= 0.15, (h, ml.operator_complexity())
        x, info = h.solve(b, tol=1e-8)
        assert info.converged
        assert np.linalg.norm(b - a @ x) <= 1e-8 * np.linalg.norm(b) * 1.01
        assert info.iterations <= 1.2 * pyamg_iterations, (info.iterations, pyamg_iterations)
        assert len(info.residuals) == info.iterations + 1
        assert set(h.setup_ms) >= {"strength", "aggregation", "galerkin", "total"}
        assert h.setup_ms["total"] > 0


def test_every_level_is_the_galerkin_product_of_the_one_above(client: spgemm.Client) -> None:
    a = generated(client, "poisson2d9:40")
    with client.amg(a, max_coarse=50) as h:
        assert len(h.levels) >= 3
        for k in range(len(h.levels) - 1):
            ak = client.download(h.levels[k].a)
            pk = client.download(h.levels[k].p)
            rk = client.download(h.levels[k].r)
            assert abs(rk - pk.T).max() == 0
            coarse = client.download(h.levels[k + 1].a)
            ref = pk.T @ ak @ pk
            assert abs(coarse - ref).max() <= 1e-12 * abs(ref).max()
        # The levels are stored matrices, listed and deleted with the hierarchy.
        listed = {m.handle for m in client.list()}
        assert {h.levels[1].a, h.levels[0].p, h.levels[0].r} <= listed
    assert not {h.levels[1].a, h.levels[0].p} & {m.handle for m in client.list()}


def test_a_scipy_cg_preconditioned_by_the_server(client: spgemm.Client) -> None:
    a = generated(client, "poisson2d5:40")
    b = np.arange(a.shape[0], dtype=np.float64) % 7
    with client.amg(a, max_coarse=100) as h:
        m = h.aslinearoperator()
        assert m.shape == a.shape
        counted: list = []
        x, code = spla.cg(a, b, rtol=1e-8, M=m, callback=lambda xk: counted.append(1))
        assert code == 0
        assert np.linalg.norm(b - a @ x) <= 1e-7 * np.linalg.norm(b)
        without: list = []
        spla.cg(a, b, rtol=1e-8, callback=lambda xk: without.append(1))
        assert len(counted) < len(without) / 3
        # One V-cycle is the preconditioner's apply; V-cycles alone converge too.
        z = h.precondition(b)
        assert z.shape == b.shape and float(b @ z) > 0
        x, info = h.solve(b, cg=False, tol=1e-6)
        assert info.converged


def test_a_resetup_with_new_values_keeps_the_levels_and_runs_numeric_only(client: spgemm.Client) -> None:
    a = generated(client, "poisson3d7:14")
    with client.amg(a, max_coarse=60) as h:
        a1 = client.download(h.levels[1].a)
        handles = [l.a for l in h.levels]
        h.resetup(2 * a)
        assert h.numeric_only
        assert [l.a for l in h.levels] == handles
        assert h.setup_ms["strength"] == 0 and h.setup_ms["aggregation"] == 0
        assert abs(client.download(h.levels[1].a) - 2 * a1).max() <= 1e-12 * abs(a1).max()
        x, info = h.solve(np.ones(a.shape[0]))
        assert info.converged
        assert np.linalg.norm(np.ones(a.shape[0]) - 2 * (a @ x)) <= 1e-7 * np.sqrt(a.shape[0])


def test_new_values_rerun_kept_products(client: spgemm.Client) -> None:
    a = sp.random(300, 300, density=0.02, format="csr", random_state=3) + sp.eye(300, format="csr")
    p = sp.random(300, 40, density=0.05, format="csr", random_state=4)
    with client.upload(a) as ra, client.upload(p) as rp:
        c = client.multiply(ra, ra, keep=True)
        g = client.galerkin(rp, ra, keep=True)
        info = client.update_values(ra, 3 * sp.csr_array(a))
        assert info.handle == ra.handle and info.nnz == ra.nnz
        assert abs(client.multiply(ra, ra) - 9 * (a @ a)).max() <= 1e-12 * abs(9 * (a @ a)).max()
        assert abs(client.galerkin(rp, ra) - 3 * (p.T @ a @ p)).max() <= 1e-12 * abs(3 * (p.T @ a @ p)).max()
        # Kept results keep the values they were computed with.
        assert abs(c.fetch() - a @ a).max() <= 1e-12 * abs(a @ a).max()
        c.delete()
        g.delete()
        with pytest.raises(ValueError):
            client.update_values(ra, np.ones(3))


def test_what_a_hierarchy_refuses(client: spgemm.Client) -> None:
    with pytest.raises(spgemm.InvalidArgument):
        client.amg(sp.random(20, 10, density=0.3, format="csr", random_state=1))
    with pytest.raises(spgemm.NotFound):
        client.hierarchy("h-00000000000000000000000000000000")
    a = generated(client, "poisson2d5:12")
    with client.amg(a) as h:
        assert len(h.levels) == 1  # 144 rows: the coarse solve alone
        with pytest.raises(ValueError):
            h.solve(np.ones(5))
        x, info = h.solve(np.ones(144))
        assert info.converged and info.iterations <= 1
        assert client.hierarchy(h.handle).levels == h.levels


def test_coarse_theta_is_sent_and_checked(client):
    a = generated(client, "poisson2d5:150")
    with client.amg(a, coarse_theta=0.0) as h0, client.amg(a) as h:
        # level 0 keeps theta; the coarse levels' graphs lose their weak couplings
        assert h.levels[1].rows == h0.levels[1].rows
        assert h.levels[2].rows > h0.levels[2].rows
    with pytest.raises(spgemm.SpgemmError):
        client.amg(a, coarse_theta=1.5)
