"""Transfers through shared memory with a server on this host (the Local service).

A client that proves it shares the server's host (ProveLocal: the server reads
back a random token this process wrote into a fresh shared-memory object)
opens a session and registers two regions of its own, reused from call to
call and grown when too small: one that uploads are copied into, one that
results are written into and copied out of. Reused, they stay pinned on the
server's side where it has GPUs: results go from the device into the result
region by the GPU's copy engines, at the link's speed. The upload region's
memory is allocated when created (``posix_fallocate``), so that a full
``/dev/shm`` fails here with an error instead of a SIGBUS on a write later.
The result region's is not: only the server writes it (pinning allocates
its pages; ``pwrite`` each page as it fills it, and a full ``/dev/shm`` is
the call's error). The gRPC messages carry only references to them
(RegionRef).
Both regions end with the session: when the client closes, or goes away.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import grpc
import numpy as np
import scipy.sparse as sp

from . import _copy, _shm
from .errors import ProtocolError
from .v1 import local_pb2 as lpb
from .v1 import spgemm_pb2 as pb

INT32_MAX = 2**31 - 1
_PAGE = 4096
_FIRST_RESULT_BYTES = 16 << 20


def _align64(n: int) -> int:
    return (n + 63) & ~63


def layout(rows: int, nnz: int, value_size: int) -> Dict[str, int]:
    """Where a CSR matrix's arrays go in a range: the server's rule (core/region_ref.hpp)."""
    cols = _align64(8 * (rows + 1))
    values = _align64(cols + 4 * nnz)
    return {"row_offsets": 0, "col_indices": cols, "values": values, "bytes": values + value_size * nnz}


def prove(local_rpc: Any, kw: Dict[str, Any]) -> lpb.ProveLocalResponse:
    """Asks the server to read back a random token from a fresh shared-memory object.

    Raises OSError where this process cannot create one, grpc.RpcError where
    the server refuses (remote caller, no Local service).
    """
    token = secrets.token_bytes(32)
    proof = _shm.SharedMemory(len(token))
    try:
        assert proof.map is not None
        proof.map[:] = token
        return local_rpc.ProveLocal(lpb.ProveLocalRequest(key=proof.key, token=token), **kw)
    finally:
        proof.close()


class Arena:
    """A shared-memory region registered with the server, reused and grown as needed.

    Hold :attr:`lock` while a call uses it.
    """

    _names = itertools.count()

    def __init__(self, local: "LocalTransfers", label: str, allocate: bool) -> None:
        self.local = local
        self.label = label
        self.allocate = allocate  # this process writes it: its memory allocated when created
        self.lock = threading.Lock()
        self.shm: Optional[_shm.SharedMemory] = None
        self.name = ""

    @property
    def size(self) -> int:
        return self.shm.size if self.shm is not None else 0

    def ensure(self, nbytes: int) -> None:
        """At least ``nbytes`` long: a new, larger region replaces a smaller one."""
        if self.shm is not None and self.shm.size >= nbytes:
            return
        size = max(nbytes, 2 * self.size, 1 << 20)
        size = (size + _PAGE - 1) // _PAGE * _PAGE
        shm = _shm.SharedMemory(size, allocate=self.allocate)
        name = "%s-%d-%d" % (self.label, os.getpid(), next(Arena._names))
        try:
            self.local.register(name, shm)
        except BaseException:
            shm.close()
            raise
        # The server holds it open now: its name goes, so that a process that ends
        # without closing leaves nothing in /dev/shm (the memory goes with the
        # last of this mapping and the server's descriptor, at the session's end).
        shm.unlink()
        old, old_name = self.shm, self.name
        self.shm, self.name = shm, name
        if old is not None:
            self.local.unregister(old_name)
            old.close()

    def ref(self, offset: int, length: int) -> pb.RegionRef:
        return pb.RegionRef(region=self.name, offset=offset, length=length)

    def close(self) -> None:
        """Unregisters and removes the region."""
        if self.shm is not None:
            self.local.unregister_quietly(self.name)
            self.shm.close()
            self.shm = None


class LocalTransfers:
    """Transfers of one client on the server's host: its session, its two shared-memory regions, and
    the device regions its device buffers register (_cuda.DeviceArena)."""

    def __init__(self, local_rpc: Any, kw: Callable[[], Dict[str, Any]], metadata: Any) -> None:
        self._rpc = local_rpc
        self._kw = kw
        # The session lives as long as this stream: no deadline.
        self._session_call = local_rpc.OpenSession(lpb.OpenSessionRequest(), metadata=metadata)
        try:
            self.session = next(self._session_call).session
        except BaseException:
            self._session_call.cancel()
            raise
        self.uploads = Arena(self, "spgemm-in", allocate=True)
        self.results = Arena(self, "spgemm-out", allocate=False)

    # -- regions ------------------------------------------------------------

    def register(self, name: str, shm: _shm.SharedMemory) -> None:
        request = lpb.RegisterRegionRequest(session=self.session, name=name, key=shm.key, offset=0, byte_size=shm.size)
        self._rpc.RegisterRegion(request, **self._kw())

    def unregister(self, name: str) -> None:
        self._rpc.UnregisterRegion(lpb.UnregisterRegionRequest(name=name), **self._kw())

    def register_device(self, name: str, handle: bytes, offset: int, size: int) -> bool:
        """Registers bytes [offset, offset + size) of the device allocation of IPC handle `handle` as a
        device region; False where the server refuses (one that takes no device regions)."""
        request = lpb.RegisterRegionRequest(session=self.session, name=name, cuda_ipc_handle=handle, offset=offset,
                                            byte_size=size)
        try:
            self._rpc.RegisterRegion(request, **self._kw())
        except grpc.RpcError:
            return False
        return True

    def unregister_quietly(self, name: str) -> None:
        """Unregisters a region where the server still has it (the session's end does otherwise)."""
        with contextlib.suppress(grpc.RpcError):
            self.unregister(name)

    # -- matrices -----------------------------------------------------------

    def upload(
        self, header: pb.MatrixHeader, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
        stored: Callable[[Any], Any],
    ) -> Any:
        """Copies a CSR matrix into the upload region and stores it (UploadFromRegion): returns
        ``stored(call)`` of the call's future, which waits for it while the region is held."""
        with self.uploads.lock:
            self.uploads.ensure(layout(int(header.rows), int(header.nnz), data.itemsize)["bytes"])
            request = self._write(0, header, indptr, indices, data)
            return stored(self._rpc.UploadFromRegion.future(request, **self._kw()))

    @contextlib.contextmanager
    def operands(
        self, matrices: Sequence[Tuple[pb.MatrixHeader, np.ndarray, np.ndarray, np.ndarray]]
    ) -> Iterator[List[pb.RegionUploadRequest]]:
        """The CSR matrices (header, indptr, indices, data) copied one after another into the upload
        region, as the requests that name them there; the region held until the block ends (a
        product that reads its operands from it runs within)."""
        with self.uploads.lock:
            starts, end = [], 0
            for header, _, _, data in matrices:
                starts.append(end)
                end = _align64(end + layout(int(header.rows), int(header.nnz), data.itemsize)["bytes"])
            self.uploads.ensure(end)
            yield [self._write(at, *m) for at, m in zip(starts, matrices)]

    def _write(
        self, at: int, header: pb.MatrixHeader, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray
    ) -> pb.RegionUploadRequest:
        """Copies a CSR matrix into the upload region from byte `at` on (hold its lock)."""
        rows, nnz = int(header.rows), int(header.nnz)
        where = layout(rows, nnz, data.itemsize)
        shm = self.uploads.shm
        assert shm is not None
        _copy.copy(shm.array(at + where["row_offsets"], rows + 1, np.dtype("<i8")), indptr)
        _copy.copy(shm.array(at + where["col_indices"], nnz, np.dtype("<i4")), indices)
        _copy.copy(shm.array(at + where["values"], nnz, data.dtype), data)
        return pb.RegionUploadRequest(
            header=header,
            row_offsets=self.uploads.ref(at + where["row_offsets"], 8 * (rows + 1)),
            col_indices=self.uploads.ref(at + where["col_indices"], 4 * nnz),
            values=self.uploads.ref(at + where["values"], data.itemsize * nnz),
        )

    @contextlib.contextmanager
    def result_range(self, needed: int = 0) -> Iterator[pb.RegionRef]:
        """The whole result region (at least ``needed`` bytes) for one call, held until the block ends."""
        with self.results.lock:
            self.results.ensure(max(needed, _FIRST_RESULT_BYTES))
            yield self.results.ref(0, self.results.size)

    def read(self, m: pb.RegionMatrix) -> sp.csr_array:
        """The matrix the server wrote into the result region (hold result_range), copied out of it."""
        h = m.header
        rows, cols, nnz = int(h.rows), int(h.cols), int(h.nnz)
        if rows < 0 or cols < 0 or nnz < 0:
            raise ProtocolError("negative size in a region result")
        dtype = np.dtype("<f4") if h.value_type == pb.FLOAT32 else np.dtype("<f8")
        shm = self.results.shm
        for ref, n in ((m.row_offsets, 8 * (rows + 1)), (m.col_indices, 4 * nnz), (m.values, dtype.itemsize * nnz)):
            if ref.region != self.results.name or ref.offset < 0 or ref.length != n or ref.offset + n > self.results.size:
                raise ProtocolError("the server wrote a result outside the result region")
        assert shm is not None
        off = shm.array(m.row_offsets.offset, rows + 1, np.dtype("<i8"))
        if off[0] != 0 or off[-1] != nnz or (rows > 1 and np.any(off[1:] < off[:-1])):
            raise ProtocolError("the result's row offsets are not those of a CSR matrix")
        # One index type for scipy: int32 where nnz allows, so that nothing is converted later.
        index = np.dtype(np.int32) if nnz <= INT32_MAX else np.dtype(np.int64)
        indptr = off.astype(index)
        del off
        columns = shm.array(m.col_indices.offset, nnz, np.dtype("<i4"))
        values = shm.array(m.values.offset, nnz, dtype)
        indices = np.empty(nnz, dtype=index)
        data = np.empty(nnz, dtype=dtype.newbyteorder("="))
        _copy.copy(indices, columns)
        _copy.copy(data, values)
        del columns, values
        return sp.csr_array((data, indices, indptr), shape=(rows, cols), copy=False)

    def close(self) -> None:
        """Unregisters and removes the regions, and ends the session."""
        self.uploads.close()
        self.results.close()
        self._session_call.cancel()
