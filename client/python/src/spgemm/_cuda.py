"""Sparse matrices in CUDA device memory (CuPy, PyTorch) sent to and received from a
server on this host by CUDA IPC: the server opens this process's allocations by
their IPC handles and copies device to device; no byte passes host memory.

An array is named by the IPC handle of the allocation it lies in (a memory
pool hands out pieces of larger allocations: the driver's
``cuMemGetAddressRange`` finds the allocation) and its offset there, which
the server opens for the call; or by its place in a device region (a
DeviceArena the client registered: opened once by the server, not every
call). The driver API is reached through ctypes; CuPy and PyTorch are
imported only when a caller passes their matrices.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import sys
import threading
from typing import Any, List, Optional, Protocol, Sequence, Tuple

from .v1 import spgemm_pb2 as pb

_driver: Optional[ctypes.CDLL] = None


class DeviceMatrix:
    """A CSR matrix's device arrays as the server takes them: int64 offsets, int32 columns, float values."""

    __slots__ = ("kind", "shape", "indptr", "indices", "data")

    def __init__(self, kind: str, shape: Tuple[int, int], indptr: Any, indices: Any, data: Any) -> None:
        self.kind, self.shape = kind, shape
        self.indptr, self.indices, self.data = indptr, indices, data

    @property
    def nbytes(self) -> int:
        """Bytes of its three arrays."""
        return sum(_pointer(a)[1] for a in (self.indptr, self.indices, self.data))


def kind_of(x: Any) -> Optional[str]:
    """"cupy" for a cupyx.scipy.sparse matrix, "torch" for a CUDA sparse CSR tensor, else None."""
    module = type(x).__module__
    if module.startswith("cupyx.scipy.sparse"):
        return "cupy"
    if module.startswith("torch") and "torch" in sys.modules:
        import torch

        if isinstance(x, torch.Tensor) and x.is_cuda and x.layout in (torch.sparse_csr, torch.sparse_coo):
            return "torch"
    return None


def device_matrix(x: Any, dtype: Any = None) -> DeviceMatrix:
    """The arrays of a CuPy or PyTorch sparse matrix in the server's types, converted on the device
    (canonical: sorted columns, duplicates summed), with its work done before the server reads it."""
    kind = kind_of(x)
    if kind == "cupy":
        import cupy

        m = x.tocsr()
        if not m.has_canonical_format:
            m = m.copy()
            m.sum_duplicates()
        target = _value_dtype(cupy, m.dtype, dtype)
        out = DeviceMatrix(kind, (int(m.shape[0]), int(m.shape[1])), m.indptr.astype(cupy.int64),
                           m.indices.astype(cupy.int32, copy=False), m.data.astype(target, copy=False))
        cupy.cuda.get_current_stream().synchronize()
        return out
    if kind == "torch":
        import torch

        m = x.to_sparse_coo().coalesce().to_sparse_csr()
        target = _value_dtype(torch, m.values().dtype, dtype)
        out = DeviceMatrix(kind, (int(m.shape[0]), int(m.shape[1])), m.crow_indices().to(torch.int64),
                           m.col_indices().to(torch.int32), m.values().to(target))
        torch.cuda.current_stream(m.device).synchronize()
        return out
    raise TypeError("spgemm: not a CuPy or PyTorch CUDA sparse matrix: %r" % type(x))


def _value_dtype(lib: Any, have: Any, want: Any) -> Any:
    """float32 stays float32 (unless `want` says otherwise); anything else becomes float64."""
    import numpy as np

    if want is not None:
        return lib.float32 if np.dtype(want) == np.float32 else lib.float64
    return lib.float32 if str(have).endswith("float32") else lib.float64


def empty_csr(kind: str, like: Any, rows: int, nnz: int, dtype: str) -> Tuple[Any, Any, Any]:
    """New device arrays for a CSR matrix (int64 offsets, int32 columns, `dtype` values) in one
    allocation, each at a multiple of 256 bytes: the server opens one IPC handle for the three."""
    parts = [(rows + 1, "int64"), (nnz, "int32"), (nnz, dtype)]
    return _carve(kind, _empty_bytes(kind, like, max(_aligned(parts), 1)), parts)


def _aligned(parts: Sequence[Tuple[int, str]]) -> int:
    """Bytes of arrays of (count, dtype) one after another, each starting at a multiple of 256."""
    import numpy as np

    return sum(-(-count * np.dtype(t).itemsize // 256) * 256 for count, t in parts)


def _carve(kind: str, buf: Any, parts: Sequence[Tuple[int, str]]) -> Tuple[Any, ...]:
    """Views of byte buffer `buf` as arrays of (count, dtype), laid out as _aligned counts them."""
    import numpy as np

    out, at = [], 0
    for count, t in parts:
        out.append(_view(kind, buf[at:at + count * np.dtype(t).itemsize], t))
        at += _aligned([(count, t)])
    return tuple(out)


class Regions(Protocol):
    """What registers device regions: the client's session (_local.LocalTransfers)."""

    def register_device(self, name: str, handle: bytes, offset: int, size: int) -> bool: ...

    def unregister_quietly(self, name: str) -> None: ...


class DeviceArena:
    """A device allocation of this client's that calls name, registered as a device region where the
    server takes them (`regions`): the server opens it once instead of at every call. Named by IPC
    handle where not. Grown by replacing it: the new one registered, the old one unregistered before
    it is freed (the server must not hold freed memory open). One call at a time (`lock`)."""

    _names = itertools.count()

    def __init__(self, kind: str, label: str, regions: Optional[Regions]) -> None:
        self.kind, self.label, self.regions = kind, label, regions
        self.lock = threading.Lock()
        self.buf: Any = None
        self.region = ""  # the device region's name; "" where not registered
        self._start = 0   # the buffer's device address

    def ensure(self, like: Any, nbytes: int) -> Any:
        """The buffer, at least `nbytes` long and on the device a new one would be (`like`'s)."""
        if self.buf is not None and _nbytes(self.buf) >= nbytes and _same_device(self.buf, self.kind, like):
            return self.buf
        self.drop()
        self.buf = _empty_bytes(self.kind, like, nbytes)
        self._start = _pointer(self.buf)[0]
        if self.regions is not None:
            base, _ = _address_range(self._start)
            name = "%s-%d-%d" % (self.label, os.getpid(), next(DeviceArena._names))
            if self.regions.register_device(name, _ipc_handle(base), self._start - base, _nbytes(self.buf)):
                self.region = name
            else:
                self.regions = None  # a server that takes no device regions: by handle from now on
        return self.buf

    def refs(self, indptr: Any, indices: Any, data: Any) -> pb.DeviceCsr:
        """Where views of the buffer lie, as a request names them."""
        return pb.DeviceCsr(row_offsets=self._ref(indptr), col_indices=self._ref(indices), values=self._ref(data))

    def _ref(self, a: Any) -> pb.DeviceArrayRef:
        if not self.region:
            return array_ref(a)
        ptr, nbytes = _pointer(a)
        if nbytes == 0:
            return pb.DeviceArrayRef()
        return pb.DeviceArrayRef(region=self.region, offset=ptr - self._start, length=nbytes)

    def drop(self) -> None:
        """Unregisters and frees the buffer."""
        if self.region and self.regions is not None:
            self.regions.unregister_quietly(self.region)
        self.region = ""
        self.buf = None


class ResultBuffer(DeviceArena):
    """The arena a product's result is copied into by the server (ProductOutput.device), then copied
    out of into arrays of the result's own: one call a product. Grown to fit a result that did not."""

    FIRST_BYTES = 16 << 20

    def arrays(self, like: Any, rows: int, nnz: int = 0) -> Tuple[Any, Any, Any]:
        """Views of the buffer (grown for `rows` and at least `nnz` entries) as int64 offsets for
        `rows` rows and int32 columns and float64 values for as many entries as the rest holds."""
        head = _aligned([(rows + 1, "int64")])
        need = max(self.FIRST_BYTES, head + 12 * nnz + 512)
        if self.buf is None or _nbytes(self.buf) < need:
            need += need // 4
        buf = self.ensure(like, need)
        entries = (_nbytes(buf) - head - 256) // 12
        offsets, columns, values = _carve(self.kind, buf, [(rows + 1, "int64"), (entries, "int32"),
                                                           (entries, "float64")])
        return offsets, columns, values


class OperandBuffer(DeviceArena):
    """The arena a product's device operands are copied into for the server to read: a device region
    the server holds open, where each operand's own allocations would be opened and closed every call."""

    FIRST_BYTES = 4 << 20

    def stage(self, like: Any, matrices: Sequence[DeviceMatrix]) -> List[pb.DeviceCsr]:
        """The matrices copied into the buffer (hold `lock`), one after another, as requests name them."""
        parts = [(int(a.shape[0]), _dtype_name(a)) for m in matrices for a in (m.indptr, m.indices, m.data)]
        need = _aligned(parts)
        if self.buf is None or _nbytes(self.buf) < need:
            need = max(self.FIRST_BYTES, need + need // 4)
        views = _carve(self.kind, self.ensure(like, need), parts)
        for view, m in zip(range(0, len(views), 3), matrices):
            for to, a in zip(views[view:view + 3], (m.indptr, m.indices, m.data)):
                if self.kind == "cupy":
                    to[...] = a
                else:
                    to.copy_(a)
        _synchronize(self.kind, like)
        return [self.refs(*views[i:i + 3]) for i in range(0, len(views), 3)]


def _dtype_name(a: Any) -> str:
    return str(a.dtype).replace("torch.", "")


def _synchronize(kind: str, like: Any) -> None:
    """Waits for the copies on the current stream (the server reads the buffer on streams of its own)."""
    if kind == "cupy":
        import cupy

        cupy.cuda.get_current_stream().synchronize()
    else:
        import torch

        torch.cuda.current_stream(like.device if like is not None else None).synchronize()


def _empty_bytes(kind: str, like: Any, n: int) -> Any:
    if kind == "cupy":
        import cupy

        return cupy.empty(n, dtype=cupy.uint8)
    import torch

    return torch.empty(n, dtype=torch.uint8, device=like.device if like is not None else "cuda")


def _nbytes(a: Any) -> int:
    return int(a.nbytes) if hasattr(a, "nbytes") else int(a.numel())


def _same_device(a: Any, kind: str, like: Any) -> bool:
    """Whether buffer `a` lies on the device a new one would: CuPy's current one, or `like`'s."""
    if kind == "cupy":
        import cupy

        return a.device.id == cupy.cuda.Device().id
    return like is None or a.device == like.device


def _view(kind: str, raw: Any, dtype: str) -> Any:
    if kind == "cupy":
        return raw.view(dtype)
    import torch

    return raw.view(getattr(torch, dtype))


def copied_out(kind: str, shape: Tuple[int, int], nnz: int, float32: bool, views: Tuple[Any, Any, Any]) -> Any:
    """The result the server copied into a ResultBuffer's `views`, in arrays of its own."""
    indptr, indices, data = views
    values = _view(kind, data, "float32") if float32 else data
    return from_arrays(kind, shape, _own(kind, indptr[:shape[0] + 1]), _own(kind, indices[:nnz]), _own(kind, values[:nnz]))


def _own(kind: str, a: Any) -> Any:
    return a.copy() if kind == "cupy" else a.clone()


def from_arrays(kind: str, shape: Tuple[int, int], indptr: Any, indices: Any, data: Any) -> Any:
    """A cupyx.scipy.sparse.csr_matrix or a torch sparse CSR tensor over the arrays (converted on the device)."""
    if kind == "cupy":
        import cupy
        import cupyx.scipy.sparse as csp

        index = cupy.int32 if data.size <= 2**31 - 1 else cupy.int64
        return csp.csr_matrix((data, indices.astype(index, copy=False), indptr.astype(index)), shape=shape)
    import torch

    return torch.sparse_csr_tensor(indptr, indices.to(torch.int64), data, size=shape)


def _pointer(a: Any) -> Tuple[int, int]:
    """Device array `a`'s address and bytes."""
    if hasattr(a, "__cuda_array_interface__"):
        iface = a.__cuda_array_interface__
        nbytes = int(a.nbytes) if hasattr(a, "nbytes") else int(a.numel() * a.element_size())
        return int(iface["data"][0]), nbytes
    return int(a.data_ptr()), int(a.numel() * a.element_size())  # a torch tensor


def array_ref(a: Any) -> pb.DeviceArrayRef:
    """Where device array `a` lies: its allocation's IPC handle, its offset there and its bytes."""
    ptr, nbytes = _pointer(a)
    if nbytes == 0:
        return pb.DeviceArrayRef()
    base, _size = _address_range(ptr)
    return pb.DeviceArrayRef(ipc_handle=_ipc_handle(base), offset=ptr - base, length=nbytes)


def csr_refs(m: DeviceMatrix) -> pb.DeviceCsr:
    return pb.DeviceCsr(row_offsets=array_ref(m.indptr), col_indices=array_ref(m.indices), values=array_ref(m.data))


def _cuda() -> ctypes.CDLL:
    global _driver
    if _driver is None:
        _driver = ctypes.CDLL("libcuda.so.1")
        _driver.cuMemGetAddressRange_v2.argtypes = [
            ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_size_t), ctypes.c_uint64]
        _driver.cuIpcGetMemHandle.argtypes = [ctypes.c_char_p, ctypes.c_uint64]
    return _driver


def _check(status: int, call: str) -> None:
    if status != 0:
        raise RuntimeError("spgemm: %s failed with CUDA driver error %d (an allocation that CUDA IPC cannot "
                           "share, e.g. from a stream-ordered pool or expandable segments?)" % (call, status))


def _address_range(ptr: int) -> Tuple[int, int]:
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    _check(_cuda().cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ptr), "cuMemGetAddressRange")
    return base.value, size.value


def _ipc_handle(base: int) -> bytes:
    handle = ctypes.create_string_buffer(64)
    _check(_cuda().cuIpcGetMemHandle(handle, base), "cuIpcGetMemHandle")
    return handle.raw


def to_host(d: DeviceMatrix) -> Any:
    """The matrix copied to host memory, for a server that cannot take CUDA IPC handles."""
    import scipy.sparse as sp

    def host(a: Any) -> Any:
        return a.get() if d.kind == "cupy" else a.cpu().numpy()

    return sp.csr_array((host(d.data), host(d.indices), host(d.indptr)), shape=d.shape)


def from_host(kind: str, m: Any) -> Any:
    """A host CSR matrix copied to the device as `kind` ("cupy" or "torch")."""
    if kind == "cupy":
        import cupyx.scipy.sparse as csp

        return csp.csr_matrix(m)
    import torch

    return torch.sparse_csr_tensor(torch.from_numpy(m.indptr.astype("int64")),
                                   torch.from_numpy(m.indices.astype("int64")), torch.from_numpy(m.data),
                                   size=m.shape).cuda()
