"""The chunk codec: scipy.sparse <-> header + row-block chunks of raw little-endian arrays.

Uploads are serialized by hand from memoryviews of the CSR arrays (one copy,
into the gRPC message), and streamed results are parsed by hand into
memoryviews of the received message, decoded with ``numpy.frombuffer`` and
copied once into arrays preallocated from the header -- on copy threads, so
that the stream goes on receiving while a chunk is copied (gRPC reads ahead
only a flow-control window of the stream). Anything that is not a chunk goes
through the generated protobuf classes.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future
from typing import Any, Deque, Iterator, List, Optional, Tuple, Union

import numpy as np
import scipy.sparse as sp

from . import _copy
from .errors import ProtocolError
from .v1 import spgemm_pb2 as pb

INT32_MAX = 2**31 - 1
DEFAULT_CHUNK_BYTES = 2 << 20
# Room for the tags and lengths around the three arrays of a chunk.
_CHUNK_OVERHEAD = 64
# A chunk's entries are copied on copy threads from this many bytes; at most
# _COPIES_IN_FLIGHT copies (two a chunk, holding its received message) wait.
_BACKGROUND_COPY_BYTES = 256 << 10
_COPIES_IN_FLIGHT = 2 * _copy.THREADS

_VALUE_TYPES = {np.dtype(np.float32): pb.FLOAT32, np.dtype(np.float64): pb.FLOAT64}
_DTYPES = {pb.FLOAT32: np.dtype("<f4"), pb.FLOAT64: np.dtype("<f8")}


def value_type_of(dtype: Any) -> int:
    """The wire ValueType of a numpy float32/float64 dtype (ValueError otherwise)."""
    dt = np.dtype(dtype)
    try:
        return _VALUE_TYPES[dt.newbyteorder("=")]
    except KeyError:
        raise ValueError("spgemm: values must be float32 or float64, not %s" % dt) from None


def output_type_of(dtype: Any) -> int:
    """The ValueType a product is asked to give: the operands' (unspecified) where dtype is None."""
    return pb.VALUE_TYPE_UNSPECIFIED if dtype is None else value_type_of(dtype)


def dtype_of(value_type: int) -> np.dtype:
    """The little-endian numpy dtype of a wire ValueType."""
    try:
        return _DTYPES[value_type]
    except KeyError:
        raise ProtocolError("unsupported value type %d" % value_type) from None


class Csr:
    """A canonical CSR matrix ready for the wire: int64 offsets, int32 columns, float values."""

    __slots__ = ("shape", "indptr", "indices", "data")

    def __init__(self, shape: Tuple[int, int], indptr: np.ndarray, indices: np.ndarray, data: np.ndarray):
        self.shape = shape
        self.indptr = indptr
        self.indices = indices
        self.data = data

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])


def to_csr(matrix: Any, dtype: Any = None) -> Csr:
    """Canonical CSR (sorted indices, duplicates summed) of any scipy.sparse matrix or 2-D array.

    The input is never modified; arrays are shared with it where they already
    have the wire's types. Integer and boolean values become float64,
    float16 becomes float32; complex values are refused.
    """
    if not sp.issparse(matrix):
        arr = np.asarray(matrix)
        if arr.ndim != 2:
            raise ValueError("spgemm: expected a 2-D matrix, got %d dimensions" % arr.ndim)
        matrix = sp.csr_array(arr)
    if matrix.ndim != 2:
        raise ValueError("spgemm: expected a 2-D matrix, got %d dimensions" % matrix.ndim)
    a = matrix.tocsr()
    if dtype is not None:
        target = np.dtype(dtype)
        value_type_of(target)
    elif a.dtype.kind == "f" and a.dtype.itemsize >= 4:
        target = np.dtype(np.float32) if a.dtype.itemsize == 4 else np.dtype(np.float64)
    elif a.dtype.kind == "f":
        target = np.dtype(np.float32)
    elif a.dtype.kind in "biu":
        target = np.dtype(np.float64)
    else:
        raise TypeError("spgemm: unsupported value type %s (float32 or float64 only)" % a.dtype)
    if not a.has_canonical_format:
        if a is matrix:
            a = a.copy()
        a.sum_duplicates()
    rows, cols = (int(n) for n in a.shape)
    if cols > INT32_MAX + 1:
        raise ValueError("spgemm: %d columns exceed 32-bit column indices" % cols)
    indptr = np.ascontiguousarray(a.indptr, dtype="<i8")
    nnz = int(indptr[-1]) if indptr.size else 0
    indices = np.ascontiguousarray(a.indices[:nnz], dtype="<i4")
    data = np.ascontiguousarray(a.data[:nnz], dtype=target.newbyteorder("<"))
    return Csr((rows, cols), indptr, indices, data)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def chunk_bounds(indptr: np.ndarray, itemsize: int, chunk_bytes: int) -> List[Tuple[int, int]]:
    """Row blocks [r0, r1) whose encoded chunk stays within chunk_bytes (one row at least)."""
    rows = indptr.size - 1
    if rows <= 0:
        return []
    # Bytes of rows [0, r): 8 per row offset + (4 + itemsize) per entry.
    cum = np.arange(rows + 1, dtype=np.int64) * 8 + indptr * (4 + itemsize)
    budget = max(chunk_bytes - _CHUNK_OVERHEAD - 8, 1)
    out = []
    r0 = 0
    while r0 < rows:
        r1 = int(np.searchsorted(cum, cum[r0] + budget, side="right")) - 1
        r1 = min(max(r1, r0 + 1), rows)
        out.append((r0, r1))
        r0 = r1
    return out


def encode_chunk(csr: Csr, r0: int, r1: int, cols_b: memoryview, vals_b: memoryview) -> bytes:
    """A serialized UploadPart{chunk} for rows [r0, r1), built from memoryviews of the arrays.

    cols_b and vals_b are byte-cast memoryviews of csr.indices and csr.data.
    """
    p0, p1 = int(csr.indptr[r0]), int(csr.indptr[r1])
    offsets = csr.indptr[r0 : r1 + 1] - p0
    off_b = memoryview(offsets).cast("B")
    c = cols_b[p0 * 4 : p1 * 4]
    isz = csr.data.itemsize
    v = vals_b[p0 * isz : p1 * isz]
    pieces: List[Any] = []
    if r0:
        pieces += [b"\x08", _varint(r0)]
    pieces += [b"\x10", _varint(r1 - r0)]
    pieces += [b"\x1a", _varint(off_b.nbytes), off_b]
    if c.nbytes:
        pieces += [b"\x22", _varint(c.nbytes), c, b"\x2a", _varint(v.nbytes), v]
    inner = sum(p.nbytes if isinstance(p, memoryview) else len(p) for p in pieces)
    return b"".join([b"\x12", _varint(inner)] + pieces)


def upload_parts(header: pb.MatrixHeader, csr: Csr, chunk_bytes: int, on_chunk: Any = None) -> Iterator[Union[pb.UploadPart, bytes]]:
    """The request stream of an upload: the header, then serialized chunks in row order."""
    yield pb.UploadPart(header=header)
    cols_b = memoryview(csr.indices).cast("B")
    vals_b = memoryview(csr.data).cast("B")
    for r0, r1 in chunk_bounds(csr.indptr, csr.data.itemsize, chunk_bytes):
        msg = encode_chunk(csr, r0, r1, cols_b, vals_b)
        if on_chunk is not None:
            on_chunk(len(msg))
        yield msg


def serialize_upload_part(part: Union[pb.UploadPart, bytes]) -> bytes:
    """Request serializer of Upload: pre-encoded chunks pass through."""
    if isinstance(part, bytes):
        return part
    return part.SerializeToString()


class RawChunk:
    """A MatrixChunk parsed by hand: its arrays are memoryviews into the received message."""

    __slots__ = ("row_begin", "row_count", "row_offsets", "col_indices", "values")

    def __init__(self) -> None:
        self.row_begin = 0
        self.row_count = 0
        empty = memoryview(b"")
        self.row_offsets: memoryview = empty
        self.col_indices: memoryview = empty
        self.values: memoryview = empty


def _read_varint(buf: memoryview, pos: int, end: int) -> Tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= end or shift > 63:
            raise ProtocolError("truncated varint in a chunk")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _skip(buf: memoryview, pos: int, end: int, wire: int) -> int:
    if wire == 0:
        return _read_varint(buf, pos, end)[1]
    if wire == 1:
        return pos + 8
    if wire == 2:
        n, pos = _read_varint(buf, pos, end)
        return pos + n
    if wire == 5:
        return pos + 4
    raise ProtocolError("unsupported wire type %d in a chunk" % wire)


def _parse_chunk(buf: memoryview, pos: int, end: int) -> RawChunk:
    ch = RawChunk()
    while pos < end:
        tag, pos = _read_varint(buf, pos, end)
        field, wire = tag >> 3, tag & 7
        if field in (1, 2) and wire == 0:
            v, pos = _read_varint(buf, pos, end)
            if v >= 1 << 63:
                v -= 1 << 64
            if field == 1:
                ch.row_begin = v
            else:
                ch.row_count = v
        elif field in (3, 4, 5) and wire == 2:
            n, pos = _read_varint(buf, pos, end)
            if pos + n > end:
                raise ProtocolError("truncated chunk")
            view = buf[pos : pos + n]
            pos += n
            if field == 3:
                ch.row_offsets = view
            elif field == 4:
                ch.col_indices = view
            else:
                ch.values = view
        else:
            pos = _skip(buf, pos, end, wire)
    if pos != end:
        raise ProtocolError("truncated chunk")
    return ch


def parse_result_part(data: bytes) -> Union[pb.ResultPart, RawChunk]:
    """Response deserializer of ResultPart: chunks by hand (zero copy), the rest by protobuf."""
    buf = memoryview(data)
    end = len(data)
    if end and buf[0] == 0x12:  # field 2 (chunk), length-delimited
        n, pos = _read_varint(buf, 1, end)
        if pos + n == end:  # exactly one field: the chunk
            return _parse_chunk(buf, pos, end)
    return pb.ResultPart.FromString(data)


# A result header's nnz where the product is computed in row panels (larger
# than a device) and its size is not known until the last chunk.
UNKNOWN_NNZ = -1


class Assembler:
    """Collects a streamed matrix's chunks into arrays preallocated from its
    header (grown as chunks come where the header's nnz is UNKNOWN_NNZ)."""

    def __init__(self, header: pb.MatrixHeader) -> None:
        if header.rows < 0 or header.cols < 0 or (header.nnz < 0 and header.nnz != UNKNOWN_NNZ):
            raise ProtocolError("negative size in header")
        if header.index_type not in (pb.INDEX_TYPE_UNSPECIFIED, pb.INT32):
            raise ProtocolError("unsupported index type %d" % header.index_type)
        self.shape = (int(header.rows), int(header.cols))
        self.nnz: Optional[int] = None if header.nnz == UNKNOWN_NNZ else int(header.nnz)
        self.dtype = dtype_of(header.value_type)
        # scipy wants one index type for offsets and columns: int32 where the
        # entries allow it (building the matrix then copies nothing), else int64
        # (an unknown nnz starts at int32 and widens as the arrays grow past it).
        self.index_dtype = (
            np.dtype(np.int32) if self.nnz is None or self.nnz <= INT32_MAX else np.dtype(np.int64)
        )
        self.indptr = np.empty(self.shape[0] + 1, dtype=self.index_dtype)
        self.indptr[0] = 0
        capacity = self.nnz if self.nnz is not None else 1 << 16
        self.indices = np.empty(capacity, dtype=self.index_dtype)
        self.data = np.empty(capacity, dtype=self.dtype.newbyteorder("="))
        self.next_row = 0
        self.pos = 0
        self._copies: Deque["Future[None]"] = deque()

    @property
    def total_bytes(self) -> Optional[int]:
        """The payload bytes expected, for progress bars (None: not known)."""
        if self.nnz is None:
            return None
        return 8 * (self.shape[0] + 1) + self.nnz * (4 + self.dtype.itemsize)

    def _room_for(self, k: int) -> None:
        """Grows the entry arrays (doubling) to hold k more; only where nnz is not known."""
        need = self.pos + k
        if self.nnz is not None or need <= self.indices.size:
            return
        self._wait_copies(0)  # they write into the arrays about to be replaced
        capacity = max(need, 2 * self.indices.size)
        if capacity > INT32_MAX and self.index_dtype == np.int32:
            self.index_dtype = np.dtype(np.int64)
            self.indptr = self.indptr.astype(self.index_dtype)
            self.indices = self.indices.astype(self.index_dtype)
        for name in ("indices", "data"):
            old = getattr(self, name)
            grown = np.empty(capacity, dtype=old.dtype)
            grown[: self.pos] = old[: self.pos]
            setattr(self, name, grown)

    def add(self, chunk: Union[RawChunk, pb.MatrixChunk]) -> int:
        """Copies one chunk in place; returns its payload bytes."""
        rb, rc = int(chunk.row_begin), int(chunk.row_count)
        if rb != self.next_row or rc < 0 or rb + rc > self.shape[0]:
            raise ProtocolError(
                "chunk rows [%d, %d) out of order (expected row %d of %d)" % (rb, rb + rc, self.next_row, self.shape[0])
            )
        off = np.frombuffer(chunk.row_offsets, dtype="<i8")
        cols = np.frombuffer(chunk.col_indices, dtype="<i4")
        vals = np.frombuffer(chunk.values, dtype=self.dtype)
        if off.size != rc + 1 or off[0] != 0:
            raise ProtocolError("chunk at row %d: %d row offsets for %d rows, first %s" % (rb, off.size, rc, off[:1]))
        k = int(off[-1])
        self._room_for(k)
        if cols.size != k or vals.size != k or self.pos + k > self.indices.size:
            raise ProtocolError(
                "chunk at row %d: %d offsets-nnz, %d columns, %d values, %d of %d entries so far"
                % (rb, k, cols.size, vals.size, self.pos, self.nnz)
            )
        if rc > 1 and np.any(off[1:] < off[:-1]):
            raise ProtocolError("chunk at row %d: row offsets decrease" % rb)
        np.add(off[1:], self.pos, out=self.indptr[rb + 1 : rb + rc + 1], casting="unsafe")
        to = slice(self.pos, self.pos + k)
        if cols.nbytes + vals.nbytes < _BACKGROUND_COPY_BYTES:
            self.indices[to] = cols
            self.data[to] = vals
        else:
            self._wait_copies(_COPIES_IN_FLIGHT - 2)
            self._copies.append(_copy.submit(self.indices[to], cols))
            self._copies.append(_copy.submit(self.data[to], vals))
        self.pos += k
        self.next_row += rc
        return off.nbytes + cols.nbytes + vals.nbytes

    def _wait_copies(self, left: int) -> None:
        """Waits until at most ``left`` chunk copies are in flight (raising what one raised)."""
        while len(self._copies) > left:
            self._copies.popleft().result()

    def finish(self) -> sp.csr_array:
        """The assembled matrix (ProtocolError if rows or entries are missing)."""
        self._wait_copies(0)
        if self.nnz is None:
            self.nnz = self.pos
            self.indices = self.indices[: self.pos].copy()
            self.data = self.data[: self.pos].copy()
        if self.next_row != self.shape[0] or self.pos != self.nnz:
            raise ProtocolError(
                "stream ended at row %d of %d, entry %d of %d" % (self.next_row, self.shape[0], self.pos, self.nnz)
            )
        return sp.csr_array((self.data, self.indices, self.indptr), shape=self.shape, copy=False)
