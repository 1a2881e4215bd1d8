"""CuPy and PyTorch matrices in, the same out: device to device by CUDA IPC where the
server runs on this host's GPUs (SPGEMM_TEST_BACKEND=auto on the GPU host), through
host memory where it cannot (a CPU server). Skipped without CuPy and a GPU."""

from __future__ import annotations

import os
from typing import Any, Iterator, List, Tuple

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm
from spgemm import _cuda
from spgemm.v1 import local_pb2 as lpb
from spgemm.v1 import spgemm_pb2 as pb

from conftest import GPU_ONLY, assert_product_close, count_calls, load_matrix, matrix_names

cupy = pytest.importorskip("cupy", reason=GPU_ONLY + "CuPy is not installed")
csp = pytest.importorskip("cupyx.scipy.sparse", reason=GPU_ONLY + "CuPy is not installed")
try:
    if cupy.cuda.runtime.getDeviceCount() == 0:
        pytest.skip(GPU_ONLY + "no GPU visible", allow_module_level=True)
except cupy.cuda.runtime.CUDARuntimeError as e:
    pytest.skip(GPU_ONLY + "no usable GPU: %s" % e, allow_module_level=True)

GPU_SERVER = os.environ.get("SPGEMM_TEST_BACKEND", "cpu") != "cpu"


def random_csr(rows: int, cols: int, density: float, seed: int, dtype=np.float64) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    return sp.random_array((rows, cols), density=density, format="csr", dtype=dtype, rng=rng,
                           data_sampler=lambda size: rng.uniform(-1, 1, size))


@pytest.fixture(scope="module")
def gpu_client(server_addresses: Tuple[str, str]) -> Iterator[spgemm.Client]:
    with spgemm.Client(server_addresses[1], timeout=300, progress=False) as c:
        yield c


@pytest.fixture
def no_host_staging(gpu_client: spgemm.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails the test where a device matrix would pass through host memory."""
    if not GPU_SERVER:
        pytest.skip(GPU_ONLY + "CUDA IPC needs the server on this host's GPUs (SPGEMM_TEST_BACKEND=auto)")
    assert gpu_client.cuda_ipc

    def refuse(*args, **kwargs):
        raise AssertionError("a device matrix went through host memory")

    monkeypatch.setattr(_cuda, "to_host", refuse)
    monkeypatch.setattr(_cuda, "from_host", refuse)


def host(m) -> sp.csr_array:
    return sp.csr_array(m.get()) if hasattr(m, "get") else sp.csr_array(
        (m.values().cpu().numpy(), m.col_indices().cpu().numpy(), m.crow_indices().cpu().numpy()), shape=m.shape)


def test_cupy_in_cupy_out(gpu_client: spgemm.Client) -> None:
    a = random_csr(2000, 2000, 0.003, 1)
    c = gpu_client.multiply(csp.csr_matrix(a))
    assert isinstance(c, csp.csr_matrix)
    assert_product_close(host(c), a, a, 1e-12)


@pytest.mark.parametrize("name", [n for n in ("cage11", "bcsstk16", "wiki-Vote") if n in matrix_names()] or [None])
def test_cupy_by_ipc_device_to_device(gpu_client: spgemm.Client, no_host_staging: None, name) -> None:
    a = load_matrix(name)
    da = csp.csr_matrix(a)
    c = gpu_client.multiply(da)
    assert isinstance(c, csp.csr_matrix)
    assert_product_close(host(c), a, a, 1e-12)
    with gpu_client.upload(da) as r:
        assert (sp.csr_array(r.fetch()) != a).nnz == 0
        back = r.client.download(r, into="cupy")
        assert (host(back) != a).nnz == 0
        t = gpu_client.transpose(da)
        assert (host(t) != sp.csr_array(a.T.tocsr())).nnz == 0


def test_device_operands_go_with_the_product_in_one_call(gpu_client: spgemm.Client, no_host_staging: None,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A product of device matrices reads them by CUDA IPC itself (MultiplyRequest.a_device, b_device;
    Galerkin's and Transpose's) and copies its result into the client's result buffer
    (ProductOutput.device): one call a product, nothing left stored."""
    a = random_csr(700, 500, 0.01, 11)
    b = random_csr(500, 600, 0.01, 12)
    sq = random_csr(500, 500, 0.01, 13)
    p = random_csr(500, 60, 0.04, 14)
    before = {m.handle for m in gpu_client.list()}
    real = gpu_client._rpc
    calls = count_calls(gpu_client, monkeypatch)
    assert_product_close(host(gpu_client.multiply(csp.csr_matrix(a), csp.csr_matrix(b))), a, b, 1e-12)
    assert_product_close(host(gpu_client.multiply(csp.csr_matrix(sq))), sq, sq, 1e-12)  # B = A
    assert_product_close(host(gpu_client.galerkin(csp.csr_matrix(p), csp.csr_matrix(sq))), p.T @ sq, p, 1e-12)
    assert (host(gpu_client.transpose(csp.csr_matrix(a))) != sp.csr_array(a.T.tocsr())).nnz == 0
    assert calls == ["Multiply", "Multiply", "Galerkin", "Transpose"]
    monkeypatch.setattr(gpu_client, "_rpc", real)
    with gpu_client.upload(csp.csr_matrix(b)) as rb:  # device times stored
        assert_product_close(host(gpu_client.multiply(csp.csr_matrix(a), rb)), a, b, 1e-12)
    assert {m.handle for m in gpu_client.list()} == before


def test_a_result_larger_than_the_result_buffer_is_kept_and_downloaded(
        server_addresses: Tuple[str, str], no_host_staging: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cuda.ResultBuffer, "FIRST_BYTES", 4096)
    a = random_csr(3000, 3000, 0.003, 15)
    with spgemm.Client(server_addresses[1], timeout=300, progress=False) as c:
        before = {m.handle for m in c.list()}
        real = c._rpc
        calls = count_calls(c, monkeypatch)
        for _ in range(2):  # kept and downloaded, then into the buffer grown for it
            assert_product_close(host(c.multiply(csp.csr_matrix(a))), a, a, 1e-12)
        assert calls == ["Multiply", "Download", "Multiply"]
        monkeypatch.setattr(c, "_rpc", real)
        assert {m.handle for m in c.list()} == before
        f32 = random_csr(500, 500, 0.01, 16, np.float32)
        c32 = c.multiply(csp.csr_matrix(f32))
        assert c32.dtype == np.float32
        assert_product_close(host(c32), f32, f32, 1e-4)


def device_regions(c: spgemm.Client) -> List[lpb.RegionInfo]:
    return [r for r in c._local_rpc.ListRegions(lpb.ListRegionsRequest(), timeout=60).regions if r.device]


def test_the_device_buffers_are_regions_the_server_opens_once(
        server_addresses: Tuple[str, str], no_host_staging: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The client's operand and result buffers are device regions of its session, registered once:
    the products name them, not IPC handles, and they go with the client."""
    a = random_csr(900, 900, 0.01, 21)
    b = random_csr(900, 700, 0.01, 22)
    with spgemm.Client(server_addresses[1], timeout=300, progress=False) as c:
        sent: List[Any] = []
        real = c._rpc

        class Recording:
            def __getattr__(self, method: str):
                def call(request, **kw):
                    sent.append(request)
                    return getattr(real, method)(request, **kw)
                return call

        monkeypatch.setattr(c, "_rpc", Recording())
        for _ in range(3):
            assert_product_close(host(c.multiply(csp.csr_matrix(a), csp.csr_matrix(b))), a, b, 1e-12)
        monkeypatch.setattr(c, "_rpc", real)
        mine = {r.name for r in device_regions(c) if r.session == c._session.session}
        assert len(mine) == 2  # the operands', the result's
        for request in sent:
            for refs in (request.a_device.arrays, request.b_device.arrays, request.output.device):
                for ref in (refs.row_offsets, refs.col_indices, refs.values):
                    assert ref.region in mine and not ref.ipc_handle
    with spgemm.Client(server_addresses[1], timeout=60, progress=False) as other:
        assert not mine & {r.name for r in device_regions(other)}


def test_bad_device_region_references_are_refused(gpu_client: spgemm.Client, no_host_staging: None) -> None:
    a = random_csr(100, 100, 0.05, 23)
    gpu_client.multiply(csp.csr_matrix(a))  # the buffers registered
    d = _cuda.device_matrix(csp.csr_matrix(a))
    staging = gpu_client._operand_buffers["cupy"]
    with staging.lock:
        refs = staging.stage(d.indptr, [d])[0]
        header = pb.MatrixHeader(rows=100, cols=100, nnz=a.nnz, value_type=pb.FLOAT64, index_type=pb.INT32)

        def upload(arrays: pb.DeviceCsr) -> pb.MatrixInfo:
            return gpu_client._local_rpc.UploadFromDevice(pb.DeviceUploadRequest(header=header, arrays=arrays),
                                                          timeout=60)

        def code(change) -> str:
            bad = pb.DeviceCsr()
            bad.CopyFrom(refs)
            change(bad)
            with pytest.raises(Exception) as e:
                upload(bad)
            return spgemm.errors.from_rpc_error(e.value).code.name

        stored = upload(refs)
        assert (sp.csr_array(gpu_client.download(stored.handle)) != a).nnz == 0
        gpu_client.delete(stored.handle)
        size = _cuda._nbytes(staging.buf)
        assert code(lambda r: setattr(r.values, "offset", size - 8)) == "INVALID_ARGUMENT"   # past the region
        assert code(lambda r: setattr(r.values, "offset", -8)) == "INVALID_ARGUMENT"
        assert code(lambda r: setattr(r.values, "region", "no-such-region")) == "NOT_FOUND"
        assert code(lambda r: setattr(r.values, "ipc_handle", b"\x00" * 64)) == "INVALID_ARGUMENT"  # both
        if gpu_client._local is not None:  # a shared-memory region is no device memory
            gpu_client.upload(a).delete()
            assert code(lambda r: setattr(r.values, "region", gpu_client._local.uploads.name)) == "INVALID_ARGUMENT"
    assert_product_close(host(gpu_client.multiply(csp.csr_matrix(a))), a, a, 1e-12)


def test_an_empty_product_by_ipc(gpu_client: spgemm.Client, no_host_staging: None) -> None:
    c = gpu_client.multiply(csp.csr_matrix((300, 200)), csp.csr_matrix((200, 100)))
    assert isinstance(c, csp.csr_matrix) and c.shape == (300, 100) and c.nnz == 0


def test_float32_and_galerkin_by_ipc(gpu_client: spgemm.Client, no_host_staging: None) -> None:
    a = random_csr(800, 800, 0.01, 2, np.float32)
    p = random_csr(800, 90, 0.03, 3, np.float32)
    c = gpu_client.galerkin(csp.csr_matrix(p), csp.csr_matrix(a))
    assert c.dtype == np.float32
    assert_product_close(host(c), p.T @ a, p, 1e-4)


def test_torch_in_torch_out(gpu_client: spgemm.Client) -> None:
    torch = pytest.importorskip("torch", reason=GPU_ONLY + "PyTorch is not installed")
    a = random_csr(1500, 1500, 0.004, 4)
    t = torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype(np.int64)), torch.from_numpy(a.indices.astype(np.int64)),
                                torch.from_numpy(a.data), size=a.shape).cuda()
    c = gpu_client.multiply(t)
    assert isinstance(c, torch.Tensor) and c.is_cuda and c.layout == torch.sparse_csr
    assert_product_close(host(c), a, a, 1e-12)


def test_bad_device_references_are_refused_and_the_server_stays_up(gpu_client: spgemm.Client) -> None:
    if not GPU_SERVER:
        pytest.skip(GPU_ONLY + "CUDA IPC needs the server on this host's GPUs (SPGEMM_TEST_BACKEND=auto)")
    a = random_csr(100, 100, 0.05, 5)
    d = _cuda.device_matrix(csp.csr_matrix(a))
    refs = _cuda.csr_refs(d)
    header = pb.MatrixHeader(rows=100, cols=100, nnz=a.nnz, value_type=pb.FLOAT64, index_type=pb.INT32)

    def upload(arrays: pb.DeviceCsr) -> None:
        gpu_client._local_rpc.UploadFromDevice(pb.DeviceUploadRequest(header=header, arrays=arrays), timeout=60)

    def code(arrays: pb.DeviceCsr) -> str:
        with pytest.raises(Exception) as e:
            upload(arrays)
        return spgemm.errors.from_rpc_error(e.value).code.name

    beyond = pb.DeviceCsr()
    beyond.CopyFrom(refs)
    beyond.values.offset = 1 << 40  # far past its allocation
    assert code(beyond) == "INVALID_ARGUMENT"
    garbage = pb.DeviceCsr()
    garbage.CopyFrom(refs)
    garbage.values.ipc_handle = b"\x00" * 64
    assert code(garbage) == "INVALID_ARGUMENT"
    short = pb.DeviceCsr()
    short.CopyFrom(refs)
    short.col_indices.length -= 4
    assert code(short) == "INVALID_ARGUMENT"
    d.indices[1], d.indices[0] = int(d.indices[0]), int(d.indices[1])  # row 0 out of order
    cupy.cuda.get_current_stream().synchronize()
    if int(d.indptr[1]) >= 2:
        assert code(refs) == "INVALID_ARGUMENT"
    # Still serving, and on the device.
    assert_product_close(host(gpu_client.multiply(csp.csr_matrix(a))), a, a, 1e-12)
