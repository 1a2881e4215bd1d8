"""Each bad input becomes the right spgemm exception, with the server's message."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm
from spgemm.v1 import spgemm_pb2 as pb

from conftest import Server, spgemmd_binary


def raw_upload(client: spgemm.Client, parts) -> spgemm.MatrixInfo:
    """Uploads hand-made UploadParts through the raw stub (bypassing the client's checks)."""
    import grpc

    try:
        return client._rpc.Upload(iter(parts), timeout=30)
    except grpc.RpcError as e:
        raise spgemm.errors.from_rpc_error(e) from None


def header(rows, cols, nnz, **kw) -> pb.UploadPart:
    return pb.UploadPart(header=pb.MatrixHeader(rows=rows, cols=cols, nnz=nnz, value_type=pb.FLOAT64, index_type=pb.INT32, **kw))


def chunk(row_begin, offsets, cols, vals) -> pb.UploadPart:
    return pb.UploadPart(chunk=pb.MatrixChunk(
        row_begin=row_begin, row_count=len(offsets) - 1,
        row_offsets=np.asarray(offsets, "<i8").tobytes(),
        col_indices=np.asarray(cols, "<i4").tobytes(),
        values=np.asarray(vals, "<f8").tobytes()))


def test_unknown_handle(client: spgemm.Client) -> None:
    with pytest.raises(spgemm.NotFound) as e:
        client.describe("no-such-handle")
    assert e.value.details and e.value.code.name == "NOT_FOUND"
    with pytest.raises(spgemm.NotFound):
        client.download("no-such-handle")
    with pytest.raises(spgemm.NotFound):
        client.delete("no-such-handle")
    with pytest.raises(spgemm.NotFound):
        client.multiply("no-such-handle", "no-such-handle")
    a = sp.csr_array(np.eye(4))
    with pytest.raises(spgemm.NotFound):
        client.multiply(a, "no-such-handle")
    with pytest.raises(spgemm.NotFound):
        client.transpose("no-such-handle")
    with pytest.raises(spgemm.NotFound):
        client.galerkin("no-such-handle", a)


def test_deleted_handle(client: spgemm.Client) -> None:
    r = client.upload(sp.csr_array(np.eye(3)))
    r.delete()
    with pytest.raises(spgemm.NotFound):
        r.fetch()
    with pytest.raises(spgemm.NotFound):
        client.delete(r.handle)
    with pytest.raises(spgemm.NotFound):
        client.matrix(r.handle)


def test_shape_mismatch(client: spgemm.Client) -> None:
    a = sp.csr_array(np.ones((3, 4)))
    b = sp.csr_array(np.ones((5, 2)))
    with client.upload(a) as ra, client.upload(b) as rb:
        with pytest.raises(spgemm.InvalidArgument) as e:
            ra @ rb
        assert e.value.details
        with pytest.raises(spgemm.InvalidArgument):
            client.multiply(ra, rb)
        with pytest.raises(spgemm.InvalidArgument):
            client.galerkin(ra, rb)
    with pytest.raises(spgemm.InvalidArgument):
        client.multiply(a, b)  # local operands: the same error, temporaries deleted


def test_unknown_algorithm(client: spgemm.Client) -> None:
    a = sp.csr_array(np.eye(3))
    with pytest.raises(spgemm.InvalidArgument):
        client.multiply(a, algorithm="no-such-algorithm")


@pytest.mark.parametrize(
    "parts",
    [
        # nnz in the header disagrees with the chunks
        [header(2, 2, 3), chunk(0, [0, 1, 2], [0, 1], [1.0, 2.0])],
        # column out of range
        [header(2, 2, 2), chunk(0, [0, 1, 2], [0, 2], [1.0, 2.0])],
        # negative column
        [header(2, 2, 2), chunk(0, [0, 1, 2], [0, -1], [1.0, 2.0])],
        # unsorted columns within a row
        [header(1, 3, 2), chunk(0, [0, 2], [2, 0], [1.0, 2.0])],
        # duplicate columns within a row
        [header(1, 3, 2), chunk(0, [0, 2], [1, 1], [1.0, 2.0])],
        # row offsets not rebased to 0
        [header(2, 2, 2), chunk(0, [0, 1], [0], [1.0]), chunk(1, [1, 2], [1], [2.0])],
        # decreasing row offsets
        [header(3, 3, 2), chunk(0, [0, 2, 1, 2], [0, 1], [1.0, 2.0])],
        # chunks out of order
        [header(2, 2, 2), chunk(1, [0, 1], [1], [2.0]), chunk(0, [0, 1], [0], [1.0])],
        # rows missing
        [header(3, 2, 1), chunk(0, [0, 1], [0], [1.0])],
        # fewer values than columns
        [header(1, 2, 2), chunk(0, [0, 2], [0, 1], [1.0])],
        # no header
        [chunk(0, [0, 1], [0], [1.0])],
        # 64-bit column indices are reserved
        [pb.UploadPart(header=pb.MatrixHeader(rows=1, cols=1, nnz=0, value_type=pb.FLOAT64, index_type=pb.INT64)),
         chunk(0, [0, 0], [], [])],
        # no value type
        [pb.UploadPart(header=pb.MatrixHeader(rows=1, cols=1, nnz=0)), chunk(0, [0, 0], [], [])],
        # negative shape
        [header(-1, 2, 0)],
    ],
    ids=["nnz", "col-range", "col-negative", "unsorted", "duplicate", "not-rebased", "decreasing",
         "order", "rows-missing", "values-short", "no-header", "int64", "no-value-type", "negative-shape"],
)
def test_malformed_upload(client: spgemm.Client, handles, parts) -> None:
    before = handles()
    with pytest.raises(spgemm.InvalidArgument) as e:
        raw_upload(client, parts)
    assert e.value.details
    assert handles() == before


def test_well_formed_raw_upload(client: spgemm.Client) -> None:
    # The raw path itself works: the malformed cases fail for their defect alone.
    info = raw_upload(client, [header(2, 2, 2), chunk(0, [0, 1], [0], [1.0]), chunk(1, [0, 1], [1], [2.0])])
    r = spgemm.RemoteMatrix(client, spgemm.MatrixInfo.from_proto(info))
    with r:
        assert (r.fetch() != sp.csr_array(np.diag([1.0, 2.0]))).nnz == 0


def test_too_big(tmp_path: Path) -> None:
    # A product larger than a device runs in row panels (test_panels.py), so what is
    # too big is a single row of the result larger than a device: an outer product
    # of a 2^17 column and a 2^17 row (every row of C 1.5 MB) on devices of 6 MiB.
    # (On the session's server, whose budget is most of the host, the outer product
    # of 2^20 would run and stream 13 TB.)
    s = Server(spgemmd_binary(), tmp_path, 0, ["--device_budget_bytes=%d" % (6 << 20)])
    try:
        s.wait_ready()
        n = 1 << 17
        col = sp.csr_array((np.ones(n), np.zeros(n, dtype=np.int32), np.arange(n + 1)), shape=(n, 1))
        with spgemm.Client(s.address, timeout=120, progress=False) as client:
            with client.upload(col) as rc, rc.T as rr:
                with pytest.raises(spgemm.ResourceExhausted) as e:
                    client.multiply(rc, rr)
                assert e.value.details and "alone needs" in e.value.details
                assert client.status().devices[0].reserved_bytes == 0
    finally:
        s.stop()


def test_unavailable() -> None:
    # Nothing listens on port 1.
    with spgemm.Client("127.0.0.1:1", timeout=10) as c:
        with pytest.raises(spgemm.Unavailable):
            c.status()


def test_deadline_exceeded(client: spgemm.Client, server_address: str) -> None:
    # Transfers of ~12 MB cannot finish within a millisecond.
    a = sp.random_array((200000, 200000), density=5e-6, format="csr", rng=np.random.default_rng(0))
    with spgemm.Client(server_address, timeout=1e-3, progress=False, transfer="wire") as hasty:
        with pytest.raises(spgemm.DeadlineExceeded) as e:
            hasty.upload(a)
        assert e.value.code.name == "DEADLINE_EXCEEDED"
        with client.upload(a) as r:
            with pytest.raises(spgemm.DeadlineExceeded):
                hasty.multiply(r.handle, r.handle)
            with pytest.raises(spgemm.DeadlineExceeded):
                hasty.download(r.handle)


def test_cancelled(client: spgemm.Client) -> None:
    # Cancelling a result stream from the client side surfaces as Cancelled.
    import grpc

    a = sp.random_array((3000, 3000), density=1e-2, format="csr", rng=np.random.default_rng(1))
    with client.upload(a) as r:
        call = client._rpc.Multiply(pb.MultiplyRequest(a=r.handle, b=r.handle), timeout=60)
        call.cancel()
        with pytest.raises(spgemm.Cancelled):
            try:
                for _ in call:
                    pass
            except grpc.RpcError as e:
                raise spgemm.errors.from_rpc_error(e) from None
