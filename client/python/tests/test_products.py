"""Products on a real spgemmd against scipy: shared matrices, precisions, shapes, chains."""

from __future__ import annotations

import os
from typing import Optional

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm

from conftest import assert_product_close, load_matrix, matrix_names

F64_RTOL = 1e-12
F32_RTOL = 1e-4
# Small enough to square twice more in float32 within the time budget.
F32_MATRICES = ["bayer10", "bcsstk13", "cryg2500", "hep-th", "mbeacxc", "rajat01", "wiki-Vote", "cage11"]


def random_csr(rows: int, cols: int, density: float, seed: int, dtype=np.float64) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    return sp.random_array((rows, cols), density=density, format="csr", dtype=dtype, rng=rng,
                           data_sampler=lambda size: rng.uniform(-1, 1, size))


@pytest.mark.parametrize("name", matrix_names())
def test_square_shared_matrix_float64(client: spgemm.Client, name: Optional[str]) -> None:
    a = load_matrix(name)
    c = client.multiply(a)
    assert isinstance(c, sp.csr_array) and c.dtype == np.float64
    assert_product_close(c, a, a, F64_RTOL)
    stats = client.last_stats
    assert stats is not None and stats.nnz == c.nnz
    if stats.flops:  # 0: not reported
        row_nnz = np.diff(a.indptr)
        assert stats.flops == pytest.approx(2.0 * row_nnz[a.indices].sum(), rel=1e-9)


@pytest.mark.parametrize("name", F32_MATRICES)
def test_square_shared_matrix_float32(client: spgemm.Client, name: str) -> None:
    if name not in matrix_names():
        load_matrix(None if matrix_names() == [None] else name)  # fails or skips with the reason
    a = load_matrix(name).astype(np.float32)
    c = client.multiply(a)
    assert c.dtype == np.float32
    assert_product_close(c, a, a, F32_RTOL)


def test_remote_product_matches_local(client: spgemm.Client, handles) -> None:
    a = random_csr(400, 300, 0.03, 1)
    b = random_csr(300, 500, 0.03, 2)
    with client.upload(a, "a") as ra, client.upload(b, "b") as rb:
        assert ra.shape == (400, 300) and rb.shape == (300, 500)
        assert ra.nnz == a.nnz and ra.dtype == np.float64
        with ra @ rb as rc:
            assert isinstance(rc, spgemm.RemoteMatrix)
            assert rc.shape == (400, 500)
            assert rc.handle in handles()
            assert_product_close(rc.fetch(), a, b, F64_RTOL)
        assert_product_close(client.multiply(ra, rb), a, b, F64_RTOL)  # remote in, local out
        assert_product_close(client.multiply(a, rb), a, b, F64_RTOL)  # mixed


@pytest.mark.parametrize("shape", [(1, 1, 1), (50, 1, 60), (1, 80, 1), (200, 30, 7), (7, 300, 900)])
def test_rectangular(client: spgemm.Client, shape) -> None:
    m, k, n = shape
    a = random_csr(m, k, 0.2, m + k)
    b = random_csr(k, n, 0.2, k + n)
    assert_product_close(client.multiply(a, b), a, b, F64_RTOL)


def test_edge_cases(client: spgemm.Client) -> None:
    # Empty operands, empty rows and columns, one dense row.
    empty = sp.csr_array((40, 30))
    b = random_csr(30, 20, 0.1, 3)
    c = client.multiply(empty, b)
    assert c.shape == (40, 20) and c.nnz == 0
    a = random_csr(64, 64, 0.05, 4).tolil()
    a[10, :] = 1.0
    a[:, 20] = 0.0
    a = sp.csr_array(a)
    assert_product_close(client.multiply(a), a, a, F64_RTOL)


def test_roundtrip_exact(client: spgemm.Client) -> None:
    a = random_csr(3000, 2000, 0.01, 5)
    with client.upload(a) as r:
        back = r.fetch()
        assert back.dtype == np.float64 and back.shape == a.shape
        np.testing.assert_array_equal(back.indptr, a.indptr)
        np.testing.assert_array_equal(back.indices, a.indices)
        np.testing.assert_array_equal(back.data, a.data)
        info = client.describe(r)
        assert info.handle == r.handle and info.nnz == a.nnz and info.shape == a.shape


def test_small_chunks(server_address: str) -> None:
    a = random_csr(2000, 2000, 0.01, 6)
    with spgemm.Client(server_address, chunk_bytes=4096, progress=False, timeout=120, transfer="wire") as small:
        with small.upload(a) as r:
            assert (r.fetch() != a).nnz == 0
        assert_product_close(small.multiply(a), a, a, F64_RTOL)


def test_mixed_precision_and_output_type(client: spgemm.Client) -> None:
    a = random_csr(300, 300, 0.03, 7, np.float32)
    b = random_csr(300, 300, 0.03, 8, np.float64)
    c = client.multiply(a, b)
    assert c.dtype == np.float64  # the wider operand
    assert_product_close(c, a, b, F64_RTOL)
    c32 = client.multiply(b, b, dtype=np.float32)
    assert c32.dtype == np.float32
    assert_product_close(c32, b, b, F32_RTOL)


def test_canonicalizes_input(client: spgemm.Client) -> None:
    # Unsorted indices and duplicates, COO and integer input.
    coo = sp.coo_array((np.array([1, 2, 3, 4]), (np.array([0, 0, 1, 0]), np.array([2, 0, 1, 2]))), shape=(3, 3))
    ref = sp.csr_array(coo, dtype=np.float64)
    assert_product_close(client.multiply(coo), ref, ref, F64_RTOL)
    with client.upload(coo) as r:
        assert r.nnz == 3 and r.dtype == np.float64


def test_chained_remote_products(client: spgemm.Client, handles) -> None:
    a = load_matrix("cryg2500") if "cryg2500" in matrix_names() else random_csr(2500, 2500, 0.002, 9)
    before = handles()
    with client.upload(a) as r:
        with r @ r as r2, r2 @ r as r3, r @ r @ r @ r as r4:
            assert_product_close(r3.fetch(), a @ a, a, F64_RTOL)
            assert_product_close(r4.fetch(), a @ a @ a, a, F64_RTOL)
    # r @ r inside the r4 chain is an unnamed intermediate: delete what is left.
    for h in handles() - before:
        client.delete(h)
    assert handles() == before


def test_transpose(client: spgemm.Client) -> None:
    a = random_csr(300, 120, 0.05, 10)
    t = client.transpose(a)
    assert t.shape == (120, 300) and (t != a.T).nnz == 0
    with client.upload(a) as r, r.T as rt:
        assert rt.shape == (120, 300)
        assert (rt.fetch() != a.T).nnz == 0


@pytest.mark.parametrize("form", ["ptap", "papt"])
def test_galerkin(client: spgemm.Client, form: str) -> None:
    a = random_csr(200, 200, 0.05, 11)
    a = a + a.T
    p = random_csr(200, 40, 0.05, 12) if form == "ptap" else random_csr(40, 200, 0.05, 12)
    c = client.galerkin(p, a, form=form)
    if form == "ptap":
        ref = p.T @ a @ p
    else:
        ref = p @ a @ p.T
    scale = (abs(p.T) @ abs(a) @ abs(p)) if form == "ptap" else (abs(p) @ abs(a) @ abs(p.T))
    excess = abs(c - ref) - 1e-12 * scale
    assert c.shape == ref.shape and excess.data.max(initial=0.0) <= 0


def test_status(client: spgemm.Client) -> None:
    s = client.status()
    assert isinstance(s, spgemm.ServerStatus)
    assert s.version
    # The fixture's server runs on SPGEMM_TEST_BACKEND: the CPU, or every GPU.
    first = "cpu" if os.environ.get("SPGEMM_TEST_BACKEND", "cpu") == "cpu" else "cuda:0"
    assert s.devices and s.devices[0].name == first
