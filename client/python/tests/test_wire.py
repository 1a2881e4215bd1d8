"""The chunk codec and the error mapping, without a server."""

from __future__ import annotations

import grpc
import numpy as np
import pytest
import scipy.sparse as sp

import spgemm
from spgemm import _wire
from spgemm.v1 import spgemm_pb2 as pb


def random_csr(rows: int, cols: int, density: float, seed: int, dtype=np.float64) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    return sp.random_array((rows, cols), density=density, format="csr", dtype=dtype, rng=rng)


def roundtrip(a: sp.sparray, chunk_bytes: int) -> sp.csr_array:
    """Upload encoding -> protobuf parse -> result-stream decoding -> assembled matrix."""
    csr = _wire.to_csr(a)
    header = pb.MatrixHeader(rows=csr.shape[0], cols=csr.shape[1], nnz=csr.nnz, value_type=_wire.value_type_of(csr.data.dtype))
    parts = list(_wire.upload_parts(header, csr, chunk_bytes))
    assert isinstance(parts[0], pb.UploadPart) and parts[0].WhichOneof("part") == "header"
    asm = _wire.Assembler(parts[0].header)
    for raw in parts[1:]:
        assert len(raw) <= max(chunk_bytes, 64 + 8 * 2 + 12 * csr.shape[1])
        up = pb.UploadPart.FromString(raw)  # what the server sees
        assert up.WhichOneof("part") == "chunk"
        # The same chunk as a ResultPart goes through the hand-written parser.
        result_bytes = pb.ResultPart(chunk=up.chunk).SerializeToString()
        parsed = _wire.parse_result_part(result_bytes)
        assert isinstance(parsed, _wire.RawChunk)
        assert (parsed.row_begin, parsed.row_count) == (up.chunk.row_begin, up.chunk.row_count)
        assert bytes(parsed.row_offsets) == up.chunk.row_offsets
        assert bytes(parsed.col_indices) == up.chunk.col_indices
        assert bytes(parsed.values) == up.chunk.values
        asm.add(parsed)
    return asm.finish()


@pytest.mark.parametrize("chunk_bytes", [1024, 4096, 1 << 20])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_roundtrip(chunk_bytes: int, dtype) -> None:
    a = random_csr(700, 300, 0.05, 1, dtype)
    a = sp.csr_array(sp.diags_array(np.r_[np.ones(5), 0.0, np.ones(694)]) @ a).astype(dtype)  # row 5 empty
    c = roundtrip(a, chunk_bytes)
    assert c.dtype == dtype
    assert (c != a).nnz == 0
    np.testing.assert_array_equal(c.indptr, a.indptr)


def test_roundtrip_edge_shapes() -> None:
    for a in [sp.csr_array((0, 0)), sp.csr_array((3, 0)), sp.csr_array((0, 4)), sp.csr_array((5, 7)),
              sp.csr_array(np.ones((1, 1))), sp.csr_array(np.ones((2, 3000)))]:
        c = roundtrip(a, 1024)  # the dense row of 3000 exceeds the chunk: sent whole
        assert c.shape == a.shape and (c != a).nnz == 0


def test_chunks_respect_size() -> None:
    a = random_csr(5000, 5000, 0.01, 2)
    csr = _wire.to_csr(a)
    header = pb.MatrixHeader(rows=5000, cols=5000, nnz=csr.nnz, value_type=pb.FLOAT64)
    sizes = [len(p) for p in list(_wire.upload_parts(header, csr, 64 << 10))[1:]]
    assert len(sizes) > 10 and max(sizes) <= 64 << 10
    assert max(len(p) for p in list(_wire.upload_parts(header, csr, _wire.DEFAULT_CHUNK_BYTES))[1:]) <= _wire.DEFAULT_CHUNK_BYTES


def test_to_csr_canonical_and_leaves_input_alone() -> None:
    row = np.array([0, 0, 1, 0])
    col = np.array([2, 0, 1, 2])
    val = np.array([1.0, 2.0, 3.0, 4.0])
    coo = sp.coo_array((val, (row, col)), shape=(2, 3))
    csr = _wire.to_csr(coo)
    np.testing.assert_array_equal(csr.indptr, [0, 2, 3])
    np.testing.assert_array_equal(csr.indices, [0, 2, 1])
    np.testing.assert_array_equal(csr.data, [2.0, 5.0, 3.0])
    assert csr.indptr.dtype == np.int64 and csr.indices.dtype == np.int32
    # A non-canonical CSR input is not modified.
    m = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]), np.array([0, 3, 3])), shape=(2, 3))
    before = (m.indices.copy(), m.data.copy())
    out = _wire.to_csr(m)
    np.testing.assert_array_equal(out.indices, [0, 2])
    np.testing.assert_array_equal(out.data, [2.0, 4.0])
    np.testing.assert_array_equal(m.indices, before[0])
    np.testing.assert_array_equal(m.data, before[1])


def test_to_csr_types() -> None:
    assert _wire.to_csr(sp.csr_array(np.eye(3, dtype=np.int64))).data.dtype == np.float64
    assert _wire.to_csr(sp.csr_array(np.eye(3, dtype=np.float32))).data.dtype == np.float32
    assert _wire.to_csr(sp.csr_array(np.eye(3)), dtype="float32").data.dtype == np.float32
    assert _wire.to_csr(np.eye(3)).nnz == 3
    with pytest.raises(TypeError):
        _wire.to_csr(sp.csr_array(np.eye(3, dtype=np.complex128)))
    with pytest.raises(ValueError):
        _wire.to_csr(sp.csr_array(np.eye(3)), dtype=np.int32)


def test_assembler_rejects_bad_streams() -> None:
    header = pb.MatrixHeader(rows=2, cols=2, nnz=1, value_type=pb.FLOAT64)
    asm = _wire.Assembler(header)
    with pytest.raises(spgemm.ProtocolError):
        asm.add(pb.MatrixChunk(row_begin=1, row_count=1, row_offsets=np.array([0, 1], "<i8").tobytes()))
    asm = _wire.Assembler(header)
    asm.add(pb.MatrixChunk(row_begin=0, row_count=1, row_offsets=np.array([0, 0], "<i8").tobytes()))
    with pytest.raises(spgemm.ProtocolError):
        asm.finish()


class FakeRpcError(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        self._code, self._details = code, details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


@pytest.mark.parametrize("code", [c for c in grpc.StatusCode if c != grpc.StatusCode.OK])
def test_every_status_code_maps(code: grpc.StatusCode) -> None:
    err = spgemm.errors.from_rpc_error(FakeRpcError(code, "the server's words"))
    assert isinstance(err, spgemm.SpgemmError)
    assert type(err) is spgemm.ERRORS_BY_CODE[code]
    assert err.code == code and err.details == "the server's words"
    assert "the server's words" in str(err) and code.name in str(err)


def test_named_classes() -> None:
    S = grpc.StatusCode
    for cls, code in [(spgemm.InvalidArgument, S.INVALID_ARGUMENT), (spgemm.NotFound, S.NOT_FOUND),
                      (spgemm.ResourceExhausted, S.RESOURCE_EXHAUSTED), (spgemm.Unavailable, S.UNAVAILABLE),
                      (spgemm.DeadlineExceeded, S.DEADLINE_EXCEEDED), (spgemm.Cancelled, S.CANCELLED),
                      (spgemm.Internal, S.INTERNAL)]:
        assert spgemm.ERRORS_BY_CODE[code] is cls and issubclass(cls, spgemm.SpgemmError)
