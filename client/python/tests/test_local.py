"""The paths a matrix takes: TCP and the Unix socket, each over the wire and through
shared memory, give equal results; shared-memory regions are checked, refused where
they lie, and gone with their session; the server refuses what it should."""

from __future__ import annotations

import glob
import os
from typing import Iterator, List, Optional, Tuple

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm
from spgemm import _local, _shm
from spgemm.v1 import local_pb2 as lpb
from spgemm.v1 import spgemm_pb2 as pb

from conftest import assert_product_close, count_calls, load_matrix, matrix_names, spgemmd

PATHS = [("tcp", "wire"), ("tcp", "shared_memory"), ("unix", "wire"), ("unix", "shared_memory")]
# A few shared matrices of different shapes for every path (all of them run over TCP in test_products).
SHARED = ["bcsstk16", "cage11", "wiki-Vote", "rajat01"]


def random_csr(rows: int, cols: int, density: float, seed: int, dtype=np.float64) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    return sp.random_array((rows, cols), density=density, format="csr", dtype=dtype, rng=rng,
                           data_sampler=lambda size: rng.uniform(-1, 1, size))


@pytest.fixture(scope="module")
def clients(server_addresses: Tuple[str, str]) -> Iterator[dict]:
    """A client per path: (address kind, transfer) -> Client."""
    tcp, unix = server_addresses
    out = {}
    for kind, transfer in PATHS:
        out[(kind, transfer)] = spgemm.Client(tcp if kind == "tcp" else unix, transfer=transfer, timeout=300,
                                              progress=False)
    yield out
    for c in out.values():
        c.close()


def same(a: sp.csr_array, b: sp.csr_array) -> None:
    """Bit for bit the same CSR matrix."""
    assert a.shape == b.shape and a.dtype == b.dtype
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
    assert np.array_equal(a.data, b.data)


def shared_or_generated() -> List[Tuple[str, Optional[str]]]:
    names = [n for n in SHARED if n in matrix_names()]
    return [("generated", None)] + [("shared", n) for n in names]


def operand(name: Optional[str]) -> sp.csr_array:
    return random_csr(3000, 3000, 0.002, 11) if name is None else load_matrix(name)


def test_every_path_is_the_one_asked_for(clients: dict) -> None:
    for (kind, transfer), c in clients.items():
        assert c.transfer == transfer, (kind, transfer)


@pytest.mark.parametrize("source,name", shared_or_generated())
def test_every_path_gives_the_same_results(clients: dict, source: str, name: Optional[str]) -> None:
    a = operand(name)
    first = None
    for path, c in clients.items():
        with c.upload(a) as r:
            same(r.fetch(), sp.csr_array(a))
            product = c.multiply(a)
            kept = c.multiply(r, r, keep=True)
            with kept:
                same(kept.fetch(), product)
            transposed = c.transpose(r)
        if first is None:
            first = (product, transposed)
            assert_product_close(product, a, a, 1e-12)
            same(transposed, sp.csr_array(a.T.tocsr()))
        else:
            same(product, first[0])
            same(transposed, first[1])


def test_galerkin_and_float32_through_shared_memory(clients: dict) -> None:
    a = random_csr(500, 500, 0.02, 3, np.float32)
    p = random_csr(500, 60, 0.05, 4, np.float32)
    wire, shm = clients[("unix", "wire")], clients[("unix", "shared_memory")]
    same(shm.galerkin(p, a), wire.galerkin(p, a))
    c = shm.multiply(a, dtype=np.float32)
    assert c.dtype == np.float32
    same(c, wire.multiply(a, dtype=np.float32))


def test_a_result_larger_than_the_result_region_is_kept_and_downloaded(clients: dict) -> None:
    shm = clients[("tcp", "shared_memory")]
    # nnz(A^2) ~ 1.6M entries: ~20 MB, beyond the first 16 MiB result region.
    a = random_csr(25000, 25000, 8 / 25000, 5)
    before = {m.handle for m in shm.list()}
    c = shm.multiply(a)
    assert_product_close(c, a, a, 1e-12)
    assert {m.handle for m in shm.list()} == before  # the kept result is gone again
    same(shm.multiply(a), c)  # into the region grown for it this time


def test_local_operands_go_with_the_product_in_one_call(clients: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through shared memory a product reads local operands from the upload region itself
    (MultiplyRequest.a_region, b_region; Galerkin's and Transpose's): the results of the wire,
    nothing left stored, one call a product."""
    a = random_csr(400, 300, 0.03, 21)
    b = random_csr(300, 500, 0.03, 22)
    sq = random_csr(300, 300, 0.03, 23)
    c = random_csr(500, 200, 0.03, 25)
    p = random_csr(300, 40, 0.05, 26)
    wire, shm = clients[("tcp", "wire")], clients[("tcp", "shared_memory")]
    before = {m.handle for m in shm.list()}
    real = shm._rpc
    calls = count_calls(shm, monkeypatch)
    same(shm.multiply(a, b), wire.multiply(a, b))  # both local
    same(shm.multiply(sq), wire.multiply(sq))      # B = A
    same(shm.multiply(sq, sq), wire.multiply(sq))  # the same object twice: once in the region
    same(shm.galerkin(p, sq), wire.galerkin(p, sq))
    same(shm.transpose(a), wire.transpose(a))
    assert calls == ["Multiply"] * 3 + ["Galerkin", "Transpose"]
    monkeypatch.setattr(shm, "_rpc", real)
    with shm.upload(b) as rb:
        same(shm.multiply(a, rb), wire.multiply(a, b))        # local times stored
        same(shm.multiply(rb.handle, c), wire.multiply(b, c))  # stored times local
        with shm.multiply(a, rb, keep=True) as kept:           # kept, from a local operand
            same(kept.fetch(), wire.multiply(a, b))
    assert {m.handle for m in shm.list()} == before
    # Larger operands are uploaded first (the region is not held for a whole product).
    monkeypatch.setattr(spgemm.client, "_REGION_OPERAND_BYTES", 1000)
    same(shm.multiply(a, b), wire.multiply(a, b))
    assert {m.handle for m in shm.list()} == before


def test_a_product_refuses_an_operand_given_twice(clients: dict) -> None:
    shm = clients[("unix", "shared_memory")]
    a = random_csr(50, 50, 0.1, 24)
    csr = spgemm._wire.to_csr(a)
    operand = (spgemm.client._header_of(csr, "", 0), csr.indptr, csr.indices, csr.data)
    with shm.upload(a) as r, shm._local.operands([operand]) as (region,):
        for request in (pb.MultiplyRequest(a=r.handle, a_region=region, b=r.handle),
                        pb.MultiplyRequest(a=r.handle, b=r.handle, b_region=region)):
            with pytest.raises(spgemm.errors.InvalidArgument, match="one of a handle, ._region and ._device, not several"):
                shm._results(shm._rpc.Multiply(request, **shm._kw()), False, "multiply")
        # A range that is not the header's shape: refused, naming the operand.
        bad = pb.RegionUploadRequest()
        bad.CopyFrom(region)
        bad.values.length -= 8
        with pytest.raises(spgemm.errors.InvalidArgument, match="b_region: values"):
            shm._results(shm._rpc.Multiply(pb.MultiplyRequest(a=r.handle, b_region=bad), **shm._kw()), False,
                         "multiply")


def test_regions_go_with_their_client(server_addresses: Tuple[str, str]) -> None:
    tcp, _ = server_addresses
    big = random_csr(20000, 20000, 8 / 20000, 8)  # a result of about 14 MB, copied out of the region
    with spgemm.Client(tcp, transfer="shared_memory", progress=False) as c:
        c.upload(random_csr(100, 100, 0.05, 1)).delete()
        c.multiply(random_csr(100, 100, 0.05, 1))
        kept_out = c.multiply(big)
        assert c._local is not None
        names = {c._local.uploads.name, c._local.results.name}
        assert names <= {r.name for r in c._local_rpc.ListRegions(lpb.ListRegionsRequest()).regions}
        # Registered regions have no name left in /dev/shm: a process that dies leaves nothing there.
        assert not glob.glob("/dev/shm/spgemm-%d-*" % os.getpid())
    with spgemm.Client(tcp, transfer="shared_memory", progress=False) as other:
        left = {r.name for r in other._local_rpc.ListRegions(lpb.ListRegionsRequest()).regions}
        assert not (left & names)
    # The result outlives its client: it was copied out of the region.
    assert_product_close(kept_out, big, big, 1e-12)


def test_a_client_that_dies_leaves_nothing_behind(server_addresses: Tuple[str, str]) -> None:
    import subprocess
    import sys
    import time

    tcp, _ = server_addresses
    child = subprocess.run([sys.executable, "-c", """
import os, sys, numpy as np, scipy.sparse as sp, spgemm
c = spgemm.Client(sys.argv[1], transfer="shared_memory")
a = sp.random_array((3000, 3000), density=0.002, format="csr", rng=np.random.default_rng(1))
c.multiply(a)
print(c._local.uploads.name, c._local.results.name)
sys.stdout.flush()
os._exit(0)  # no close: the process just ends
""", tcp], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    names = set(child.stdout.split())
    pids = {name.split("-")[2] for name in names}
    assert not [p for pid in pids for p in glob.glob("/dev/shm/spgemm-%s-*" % pid)]
    with spgemm.Client(tcp, transfer="wire") as c:
        deadline = time.monotonic() + 10
        while names & {r.name for r in c._local_rpc.ListRegions(lpb.ListRegionsRequest()).regions}:
            assert time.monotonic() < deadline, "the dead client's regions outlived its session"
            time.sleep(0.05)


class Raw:
    """A session of the Local service driven by hand, with one region on a fresh object."""

    def __init__(self, address: str, size: int) -> None:
        self.client = spgemm.Client(address, transfer="wire", timeout=60, progress=False)
        self.rpc = self.client._local_rpc
        self.call = self.rpc.OpenSession(lpb.OpenSessionRequest())
        self.session = next(self.call).session
        self.shm = _shm.SharedMemory(size)

    def register(self, name: str, byte_size: int, offset: int = 0, key: Optional[str] = None):
        return self.rpc.RegisterRegion(lpb.RegisterRegionRequest(
            session=self.session, name=name, key=key or self.shm.key, offset=offset, byte_size=byte_size), timeout=60)

    def close(self) -> None:
        self.call.cancel()
        self.shm.close()
        self.client.close()


@pytest.fixture
def raw(server_address: str) -> Iterator[Raw]:
    r = Raw(server_address, 1 << 16)
    yield r
    r.close()


def code(call, *args) -> str:
    with pytest.raises(Exception) as e:
        call(*args)
    return spgemm.errors.from_rpc_error(e.value).code.name


def test_an_object_smaller_than_its_region_or_a_path_is_refused(raw: Raw) -> None:
    assert code(raw.register, "big", (1 << 16) + 1) == "INVALID_ARGUMENT"
    assert code(raw.register, "shifted", 1 << 16, 8) == "INVALID_ARGUMENT"
    assert code(raw.register, "path", 8, 0, "/../../etc/passwd") == "INVALID_ARGUMENT"
    assert code(raw.register, "absent", 8, 0, "/spgemm-no-such-object") == "NOT_FOUND"
    assert code(raw.register, "bad/name", 8) == "INVALID_ARGUMENT"
    raw.register("ok", 1 << 16)
    assert code(raw.register, "ok", 8) == "ALREADY_EXISTS"
    other = lpb.RegisterRegionRequest(session="s-not-a-session", name="x", key=raw.shm.key, byte_size=8)
    assert code(raw.rpc.RegisterRegion, other) == "NOT_FOUND"


def test_references_outside_their_region_are_refused(raw: Raw) -> None:
    raw.register("r", 4096)
    rows, nnz = 10, 20
    header = pb.MatrixHeader(rows=rows, cols=10, nnz=nnz, value_type=pb.FLOAT64, index_type=pb.INT32)

    def upload(offsets: pb.RegionRef, cols: pb.RegionRef, values: pb.RegionRef):
        return raw.rpc.UploadFromRegion(
            pb.RegionUploadRequest(header=header, row_offsets=offsets, col_indices=cols, values=values), timeout=60)

    ok = (pb.RegionRef(region="r", offset=0, length=88), pb.RegionRef(region="r", offset=128, length=80),
          pb.RegionRef(region="r", offset=256, length=160))
    indptr = raw.shm.array(0, rows + 1, np.dtype("<i8"))
    indptr[:] = np.arange(rows + 1) * 2
    cols = raw.shm.array(128, nnz, np.dtype("<i4"))
    cols[:] = np.tile([1, 5], rows)
    raw.shm.array(256, nnz, np.dtype("<f8"))[:] = 1.5
    info = upload(*ok)
    assert info.nnz == nnz
    raw.client.delete(info.handle)
    outside = pb.RegionRef(region="r", offset=4096 - 80, length=160)
    assert code(upload, ok[0], ok[1], outside) == "INVALID_ARGUMENT"
    misaligned = pb.RegionRef(region="r", offset=260, length=160)
    assert code(upload, ok[0], ok[1], misaligned) == "INVALID_ARGUMENT"
    short = pb.RegionRef(region="r", offset=256, length=152)
    assert code(upload, ok[0], ok[1], short) == "INVALID_ARGUMENT"
    unknown = pb.RegionRef(region="nope", offset=256, length=160)
    assert code(upload, ok[0], ok[1], unknown) == "NOT_FOUND"
    cols[3] = 0  # row 1: 5 then... 0: out of order
    assert code(upload, *ok) == "INVALID_ARGUMENT"
    cols[3] = 5
    indptr[4] = 1  # offsets decrease
    assert code(upload, *ok) == "INVALID_ARGUMENT"
    indptr[4] = 8
    del indptr, cols
    # A result range too small for a download, or outside its region.
    a = raw.client.upload(random_csr(50, 50, 0.2, 9))
    small = pb.DownloadRequest(handle=a.handle, region=pb.RegionRef(region="r", offset=0, length=64))
    assert code(lambda: list(raw.client._rpc.Download(small, timeout=60))) == "INVALID_ARGUMENT"
    beyond = pb.DownloadRequest(handle=a.handle, region=pb.RegionRef(region="r", offset=0, length=8192))
    assert code(lambda: list(raw.client._rpc.Download(beyond, timeout=60))) == "INVALID_ARGUMENT"
    a.delete()


def test_an_object_that_shrinks_fails_its_request_and_the_server_stays_up(raw: Raw) -> None:
    raw.register("r", 1 << 16)
    a = raw.client.upload(random_csr(200, 200, 0.1, 2))
    fd = os.open(raw.shm._path, os.O_RDWR)
    os.ftruncate(fd, 4096)
    os.close(fd)
    request = pb.DownloadRequest(handle=a.handle, region=pb.RegionRef(region="r", offset=0, length=1 << 16))
    assert code(lambda: list(raw.client._rpc.Download(request, timeout=60))) == "INVALID_ARGUMENT"
    assert raw.client.status().version  # still serving
    a.delete()


def test_a_server_without_shared_memory_refuses_it_and_auto_takes_the_wire(tmp_path) -> None:
    with spgemmd(tmp_path, "--shared_memory=false", "--cuda_ipc=false") as (tcp, unix):
        a = random_csr(300, 300, 0.02, 1)
        with spgemm.Client(unix, progress=False) as auto:
            assert auto.transfer == "wire"
            assert_product_close(auto.multiply(a), a, a, 1e-12)
        with spgemm.Client(tcp, progress=False, transfer="shared_memory") as forced:
            with pytest.raises(spgemm.FailedPrecondition):
                forced.multiply(a)
        raw = Raw(tcp, 4096)
        try:
            assert code(raw.register, "r", 4096) == "FAILED_PRECONDITION"
        finally:
            raw.close()


def test_cuda_ipc_is_refused_by_a_cpu_server(raw: Raw) -> None:
    if os.environ.get("SPGEMM_TEST_BACKEND", "cpu") != "cpu":
        pytest.skip("the server runs on GPUs here")
    header = pb.MatrixHeader(rows=1, cols=1, nnz=0, value_type=pb.FLOAT64)
    request = pb.DeviceUploadRequest(header=header)
    assert code(raw.rpc.UploadFromDevice, request) == "FAILED_PRECONDITION"
    # A device region: nothing to open it with.
    device_region = lpb.RegisterRegionRequest(session=raw.session, name="gpu", cuda_ipc_handle=b"\x01" * 64,
                                              byte_size=4096)
    assert code(raw.rpc.RegisterRegion, device_region) == "FAILED_PRECONDITION"
    # A product's operand from the device, too: refused, naming it.
    c = raw.client
    with pytest.raises(spgemm.errors.FailedPrecondition, match="a_device"):
        c._results(c._rpc.Multiply(pb.MultiplyRequest(a_device=request), **c._kw()), False, "multiply")
    # And a result copied into device arrays; kept and copied at once is no request at all.
    with c.upload(sp.csr_array(np.eye(3))) as r:
        into = pb.ProductOutput(device=pb.DeviceCsr())
        with pytest.raises(spgemm.errors.FailedPrecondition):
            c._results(c._rpc.Multiply(pb.MultiplyRequest(a=r.handle, b=r.handle, output=into), **c._kw()), False,
                       "multiply")
        into.keep = True
        with pytest.raises(spgemm.errors.InvalidArgument, match="one of them"):
            c._results(c._rpc.Multiply(pb.MultiplyRequest(a=r.handle, b=r.handle, output=into), **c._kw()), False,
                       "multiply")


def test_compressed_messages_give_the_same_results(server_address: str) -> None:
    a = random_csr(2000, 2000, 0.005, 7)
    with spgemm.Client(server_address, transfer="wire", compression="gzip", progress=False) as zipped, \
            spgemm.Client(server_address, transfer="wire", progress=False) as plain:
        with zipped.upload(a) as r:
            same(r.fetch(), sp.csr_array(a))
            same(zipped.multiply(r, r), plain.multiply(r.handle, r.handle))
    with pytest.raises(ValueError):
        spgemm.Client(server_address, compression="lzma")
