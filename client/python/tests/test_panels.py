"""A product larger than the server's devices runs in row panels: its result
streams while it is computed (the header's nnz is not known, -1: the client
grows its arrays as chunks come), or is kept in the server's host memory as a
handle like any other; over two devices (two CPU backends standing in for
GPUs) both compute, and Status shows the panels' traffic."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm
from spgemm import _wire
from spgemm.v1 import spgemm_pb2 as pb

from conftest import Server, assert_product_close, spgemmd_binary


def stencil(n: int) -> sp.csr_array:
    """A 3-D 27-point stencil on an n^3 grid with values of no symmetry: A @ A has 125 entries a row."""
    one = sp.diags_array([np.ones(n - 1), np.ones(n), np.ones(n - 1)], offsets=[-1, 0, 1], shape=(n, n))
    a = sp.kron(sp.kron(one, one), one, format="csr")
    a.data = np.linspace(0.5, 1.5, a.nnz)
    return sp.csr_array(a)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """Two CPU backends of 6 MiB each: A (2.6 MB) fits one, A @ A (12 MB) does not."""
    s = Server(spgemmd_binary(), tmp_path, 0, ["--device_budget_bytes=%d" % (6 << 20), "--cpu_backends=2"])
    try:
        s.wait_ready()
        yield s
    finally:
        s.stop()


def test_a_product_larger_than_a_device_streams_in_panels(server: Server) -> None:
    a = stencil(20)
    with spgemm.Client(server.address, timeout=120, progress=False) as c:
        result = c.multiply(a, a)
        assert c.last_stats is not None and "row panels" in c.last_stats.algorithm
        assert_product_close(result, a, a, 1e-12)
        status = c.status()
        assert [d.name for d in status.devices] == ["cpu", "cpu:1"]
        assert status.devices[1].bytes_from_peer > 0
        assert all(d.panels_in_flight == 0 and d.reserved_bytes == 0 for d in status.devices)


def test_a_kept_product_in_panels_lives_in_host_memory(server: Server) -> None:
    a = stencil(20)
    with spgemm.Client(server.address, timeout=120, progress=False) as c:
        remote = c.multiply(a, a, keep=True)
        assert remote.describe().residency == "host"
        assert_product_close(remote.fetch(), a, a, 1e-12)
        remote.delete()


def test_the_assembler_grows_where_the_size_is_not_known() -> None:
    a = sp.csr_array(sp.random_array((300, 200), density=0.1, format="csr", rng=np.random.default_rng(3)))
    header = pb.MatrixHeader(rows=300, cols=200, nnz=_wire.UNKNOWN_NNZ, value_type=pb.FLOAT64)
    asm = _wire.Assembler(header)
    assert asm.total_bytes is None
    for raw in list(_wire.upload_parts(header, _wire.to_csr(a), 1024))[1:]:
        asm.add(pb.UploadPart.FromString(raw).chunk)
    c = asm.finish()
    assert asm.nnz == a.nnz and (c != a).nnz == 0


def test_a_product_in_panels_comes_into_shared_memory(server: Server) -> None:
    a = stencil(20)
    with spgemm.Client(server.address, timeout=120, progress=False, transfer="shared_memory") as c:
        assert c.transfer == "shared_memory"
        result = c.multiply(a, a)
        assert c.last_stats is not None and "row panels" in c.last_stats.algorithm
        assert_product_close(result, a, a, 1e-12)
        remote = c.multiply(a, a, keep=True)
        assert_product_close(remote.fetch(), a, a, 1e-12)
        remote.delete()


def test_the_assembler_widens_its_indices_past_32_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    # 70,000 entries stand in for 2^31: grown past them, offsets and columns become int64.
    monkeypatch.setattr(_wire, "INT32_MAX", 70000)
    a = sp.csr_array(sp.random_array((1000, 800), density=0.1, format="csr", rng=np.random.default_rng(4)))
    assert a.nnz > 70000
    header = pb.MatrixHeader(rows=1000, cols=800, nnz=_wire.UNKNOWN_NNZ, value_type=pb.FLOAT64)
    asm = _wire.Assembler(header)
    assert asm.index_dtype == np.int32
    for raw in list(_wire.upload_parts(header, _wire.to_csr(a), 65536))[1:]:
        asm.add(pb.UploadPart.FromString(raw).chunk)
    assert asm.indptr.dtype == np.int64 and asm.indices.dtype == np.int64
    c = asm.finish()  # scipy narrows them again where the values allow
    assert c.nnz == a.nnz and (c != a).nnz == 0
    np.testing.assert_array_equal(c.indptr, a.indptr)


def test_a_kept_product_past_the_host_budget_goes_on_in_the_spill_directory(tmp_path: Path) -> None:
    spill = tmp_path / "spill"
    spill.mkdir()
    s = Server(spgemmd_binary(), tmp_path, 0, ["--device_budget_bytes=%d" % (6 << 20),
                                               "--host_budget_bytes=%d" % (4 << 20), "--spill_dir=%s" % spill])
    try:
        s.wait_ready()
        a = stencil(20)
        with spgemm.Client(s.address, timeout=120, progress=False) as c:
            remote = c.multiply(a, a, keep=True)
            status = c.status()
            assert status.spill_bytes > 0 and status.spill_budget_bytes > 0
            assert status.host_cached_bytes <= 4 << 20
            assert list(spill.iterdir()) == []  # its files have no names
            assert_product_close(remote.fetch(), a, a, 1e-12)
            assert_product_close(c.multiply(remote, a), a @ a, a, 1e-12)
            remote.delete()
            assert c.status().spill_bytes == 0
    finally:
        s.stop()
