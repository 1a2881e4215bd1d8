"""The spgemmd client: :class:`Client` and :class:`RemoteMatrix`."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union, overload

try:  # Python 3.8+
    from typing import Literal
except ImportError:  # pragma: no cover
    from typing_extensions import Literal  # type: ignore

import grpc
import numpy as np
import scipy.sparse as sp

from . import _address, _cuda, _local, _malloc, _progress, _shm, _wire
from ._rpcs import Rpcs
from .amg import Hierarchy
from .errors import FailedPrecondition, NotFound, ProtocolError, SpgemmError, from_rpc_error
from .graph import GraphCalls, GraphMethods
from .info import JobStats, MatrixInfo, ServerStatus
from .v1 import amg_pb2 as apb
from .v1 import local_pb2 as lpb
from .v1 import spgemm_pb2 as pb
from .v1 import values_pb2 as vpb

__all__ = ["Client", "RemoteMatrix", "Operand"]

#: What the product methods accept: a RemoteMatrix, a handle string, or any
#: scipy.sparse matrix/array (or dense 2-D array), uploaded for the call.
Operand = Union["RemoteMatrix", str, Any]

_SERVICE = pb.DESCRIPTOR.services_by_name["Spgemm"]
_LOCAL_SERVICE = lpb.DESCRIPTOR.services_by_name["Local"]
_MAX_RECEIVE = 256 << 20
# A matrix this large over the wire, either way, sets malloc's thresholds for streams (_malloc).
_STREAM_TUNING_BYTES = 16 << 20
_TRANSFERS = ("auto", "wire", "shared_memory")
_COMPRESSIONS = {None: None, "gzip": grpc.Compression.Gzip, "deflate": grpc.Compression.Deflate}


# How long close() waits for gRPC to close the channel (see close()).
_CLOSE_WAIT_SECONDS = 5.0

def _pem(value: Union[None, bytes, str, "os.PathLike[str]"]) -> Optional[bytes]:
    """PEM bytes: as given, or read from a path."""
    if value is None or isinstance(value, bytes):
        return value
    with open(value, "rb") as f:
        return f.read()


# Local operands up to this many bytes go to a product in the upload region (_region_operands).
_REGION_OPERAND_BYTES = 64 << 20
# Device operands up to this many bytes go to a product through the client's operand buffer (_device_operands).
_DEVICE_OPERAND_BYTES = 256 << 20


def _shape_of(op: Any, axis: int) -> Optional[int]:
    """A dimension of an operand, where the client knows it without asking (None for a bare handle)."""
    if isinstance(op, RemoteMatrix):
        return int(op.info.shape[axis])
    if isinstance(op, str) or not hasattr(op, "shape"):
        return None
    return int(op.shape[axis])


def _device_output(x: Any, y: Any, rows: Optional[int]) -> Optional[Tuple[str, Any, Optional[int]]]:
    """_run_product's `device` for operands x, y: (kind, the operand of that kind, C's rows), or None
    where neither is a CuPy or PyTorch matrix."""
    for op in (x, y):
        kind = _cuda.kind_of(op)
        if kind is not None:
            return kind, op, rows
    return None


def _device_header(d: _cuda.DeviceMatrix, name: str, ttl: Optional[float]) -> pb.MatrixHeader:
    """The header of a device matrix to store or to multiply."""
    return pb.MatrixHeader(
        rows=d.shape[0], cols=d.shape[1], nnz=int(d.indices.shape[0]),
        value_type=pb.FLOAT32 if str(d.data.dtype).endswith("float32") else pb.FLOAT64,
        index_type=pb.INT32, name=name, ttl_seconds=int(ttl) if ttl else 0,
    )


def _header_of(csr: _wire.Csr, name: str, ttl_seconds: int) -> pb.MatrixHeader:
    """The header of a matrix to store or to multiply."""
    return pb.MatrixHeader(
        rows=csr.shape[0],
        cols=csr.shape[1],
        nnz=csr.nnz,
        value_type=_wire.value_type_of(csr.data.dtype),
        index_type=pb.INT32,
        name=name,
        ttl_seconds=ttl_seconds,
    )


_FORMS = {"ptap": pb.PT_A_P, "pt_a_p": pb.PT_A_P, "papt": pb.P_A_PT, "p_a_pt": pb.P_A_PT}


class RemoteMatrix(GraphMethods):
    """A matrix stored on the server, known by its handle.

    Use it as a context manager to delete it on exit. ``A @ B`` on two remote
    matrices of the same client multiplies them on the server and keeps the
    result there (a new RemoteMatrix); ``fetch()`` downloads a matrix. The
    graph calls are its methods too (``A.mxm(B, "min_plus")``,
    ``A.select("tril")``, spgemm.graph), their results kept on the server.
    """

    def __init__(self, client: "Client", info: MatrixInfo) -> None:
        self.client: Client = client
        self.info: MatrixInfo = info
        self.deleted: bool = False

    @property
    def handle(self) -> str:
        """The server's handle of this matrix."""
        return self.info.handle

    @property
    def name(self) -> str:
        """The free-text name given at upload (may be empty)."""
        return self.info.name

    @property
    def shape(self) -> Tuple[int, int]:
        """(rows, cols)."""
        return self.info.shape

    @property
    def nnz(self) -> int:
        """Stored entries (explicit zeros included)."""
        return self.info.nnz

    @property
    def dtype(self) -> np.dtype:
        """float32 or float64."""
        return self.info.dtype

    def fetch(self, *, progress: Optional[bool] = None) -> sp.csr_array:
        """Downloads the matrix as a scipy.sparse.csr_array."""
        return self.client.download(self, progress=progress)

    def describe(self) -> MatrixInfo:
        """Fresh server-side information (residency, last use, ...); updates :attr:`info`."""
        self.info = self.client.describe(self)
        return self.info

    def delete(self) -> None:
        """Deletes the matrix on the server; a second call does nothing."""
        if not self.deleted:
            self.client.delete(self.handle)
            self.deleted = True

    def transpose(self, *, name: str = "") -> "RemoteMatrix":
        """A^T, computed and kept on the server."""
        return self.client.transpose(self, keep=True, name=name)

    @property
    def T(self) -> "RemoteMatrix":
        """A^T, computed and kept on the server (see :meth:`transpose`)."""
        return self.transpose()

    def __matmul__(self, other: Any) -> "RemoteMatrix":
        """self @ other on the server, kept there. `other` may be remote or local (uploaded for the call)."""
        if isinstance(other, RemoteMatrix) and other.client is not self.client:
            return NotImplemented
        return self.client.multiply(self, other, keep=True)

    def __enter__(self) -> "RemoteMatrix":
        return self

    def __exit__(self, *exc: Any) -> None:
        with contextlib.suppress(NotFound):
            self.delete()

    def __repr__(self) -> str:
        return "<RemoteMatrix %s %dx%d nnz=%d %s%s>" % (
            self.handle,
            self.shape[0],
            self.shape[1],
            self.nnz,
            self.dtype.name,
            " deleted" if self.deleted else "",
        )


class Client(GraphCalls):
    """A connection to an spgemmd server.

    Besides products, Galerkin products and transposes, it runs the graph calls
    (:mod:`spgemm.graph`: ``mxm`` over semirings and with masks, ``ewise_add``,
    ``apply``, ``select``, ``reduce_rowwise``, ...).

    Args:
        address: ``host:port`` of the server (port 50051 where none is given),
            or ``unix:///path`` for its Unix socket (``spgemmd --unix_socket``);
            default: ``SPGEMM_SERVER``, else ``localhost:50051``.
        token: a bearer token sent as ``authorization: Bearer <token>`` metadata
            (for a server started with ``--tokens_file``).
        tls: ``None``/``False`` for a plaintext channel (unless a certificate
            argument below is given), ``True`` for TLS with the system's roots,
            a path to a PEM file of root certificates, or ``grpc.ChannelCredentials``.
        root_certificates: PEM root certificates the server's certificate must
            chain to (bytes, or a path); ``None``: the system's. Implies TLS.
        certificate_chain, private_key: a client certificate and its key (bytes,
            or paths), for a server that asks for one (``--tls_client_ca``).
            Implies TLS.
        timeout: default deadline in seconds of every call (``None``: none).
        chunk_bytes: size of the chunks uploads send and downloads ask for
            (default 2 MiB; keep it well under gRPC's 4 MiB message limit).
        progress: default for the ``progress`` argument of transfers (``None``:
            a tqdm bar when stderr is a terminal and a transfer takes over a second).
        options: extra gRPC channel options.
        transfer: how matrices cross: ``"auto"`` (shared memory where the
            server proves it shares this host, else the wire), ``"wire"``
            (bytes in gRPC messages), or ``"shared_memory"`` (FailedPrecondition
            where the server cannot). :attr:`transfer` says which one is used.
        compression: ``None`` (the default), ``"gzip"`` or ``"deflate"``: the
            messages compressed both ways, for slow links only (it costs more
            CPU than it saves on a fast link; shared memory ignores it).

    The client is a context manager; leaving it closes the channel (and ends
    its shared-memory session).

    A KeyboardInterrupt (Ctrl-C) during a call cancels it on the server (its
    job stops) and deletes the operands uploaded for it before it propagates.
    """

    def __init__(
        self,
        address: Optional[str] = None,
        *,
        token: Optional[str] = None,
        tls: Union[None, bool, str, grpc.ChannelCredentials] = None,
        root_certificates: Union[None, bytes, str, "os.PathLike[str]"] = None,
        certificate_chain: Union[None, bytes, str, "os.PathLike[str]"] = None,
        private_key: Union[None, bytes, str, "os.PathLike[str]"] = None,
        timeout: Optional[float] = None,
        chunk_bytes: int = _wire.DEFAULT_CHUNK_BYTES,
        progress: Optional[bool] = None,
        options: Sequence[Tuple[str, Any]] = (),
        transfer: str = "auto",
        compression: Optional[str] = None,
    ) -> None:
        if chunk_bytes < 1024:
            raise ValueError("spgemm: chunk_bytes must be at least 1024")
        if transfer not in _TRANSFERS:
            raise ValueError("spgemm: transfer must be one of %s, not %r" % (", ".join(_TRANSFERS), transfer))
        self._transfer = transfer
        self._session: Optional[_local.LocalTransfers] = None  # shared memory's, device regions'
        self._local: Optional[_local.LocalTransfers] = None    # the session, where shared memory is on
        self._ipc = False
        self._result_buffers: Dict[str, _cuda.ResultBuffer] = {}
        self._operand_buffers: Dict[str, _cuda.OperandBuffer] = {}
        self._no_local = "the client was told to use the wire"
        self._local_decided = transfer == "wire"
        self._local_lock = threading.Lock()
        address = _address.with_default_port(address or _address.default_address())
        if "," in address:
            raise ValueError("spgemm: %r names several servers: a Client talks to one (see spgemm.Cluster)" % address)
        self.address: str = address
        self.timeout: Optional[float] = timeout
        self.chunk_bytes: int = int(chunk_bytes)
        self.progress: Optional[bool] = progress
        #: Figures of the last product, Galerkin product or transpose.
        self.last_stats: Optional[JobStats] = None
        self._metadata: Tuple[Tuple[str, str], ...] = (("authorization", "Bearer " + token),) if token else ()
        if compression not in _COMPRESSIONS:
            raise ValueError("spgemm: compression must be None, 'gzip' or 'deflate', not %r" % compression)
        if compression is not None:  # our messages compressed by the channel, the server's on request
            self._metadata += (("spgemm-compression", compression),)
        channel_compression = _COMPRESSIONS[compression]
        # HTTP/2 frames of up to 4 MiB: a 2 MiB chunk in one frame instead of 128
        # (gRPC's 16 KiB default): 4-9% less client CPU per byte received.
        # Result streams (unary-stream calls) read on the calling thread, not
        # handed over from the channel's thread message by message: 15-55% more
        # GB/s from the wire on the H100 host (grpc.experimental.ChannelOptions).
        opts = [("grpc.max_receive_message_length", _MAX_RECEIVE), ("grpc.max_send_message_length", -1),
                ("grpc.http2.max_frame_size", 4 << 20), ("SingleThreadedUnaryStream", 1)]
        opts += list(options)
        if (certificate_chain is None) != (private_key is None):
            raise ValueError("spgemm: certificate_chain and private_key go together: give both")
        given = root_certificates is not None or certificate_chain is not None
        if (tls is None or tls is False) and not given:
            self._channel = grpc.insecure_channel(address, options=opts, compression=channel_compression)
        else:
            if isinstance(tls, grpc.ChannelCredentials):
                creds = tls
            else:
                creds = grpc.ssl_channel_credentials(
                    root_certificates=_pem(tls if isinstance(tls, str) else root_certificates),
                    private_key=_pem(private_key),
                    certificate_chain=_pem(certificate_chain),
                )
            self._channel = grpc.secure_channel(address, creds, options=opts, compression=channel_compression)
        self._rpc = Rpcs(self._channel, _SERVICE)
        self._local_rpc = Rpcs(self._channel, _LOCAL_SERVICE)
        self._values_rpc = Rpcs(self._channel, vpb.DESCRIPTOR.services_by_name["Values"])
        self._amg_rpc = Rpcs(self._channel, apb.DESCRIPTOR.services_by_name["Amg"])

    # -- plumbing -----------------------------------------------------------

    @property
    def transfer(self) -> str:
        """``"shared_memory"`` or ``"wire"``: how this client's matrices cross (decided on first use)."""
        return "shared_memory" if self._shared_memory() is not None else "wire"

    @property
    def cuda_ipc(self) -> bool:
        """Whether CuPy and PyTorch matrices cross device to device (the server shares this host and its GPUs)."""
        self._decide_local()
        return self._ipc

    def _decide_local(self) -> None:
        """On first use: whether the server shares this host, and what crosses how (shared memory, CUDA IPC)."""
        with self._local_lock:
            if self._local_decided:
                return
            self._local_decided = True
            try:
                if not _shm.available():
                    self._no_local = "this host has no writable %s" % _shm.SHM_DIR
                    return
                proof = _local.prove(self._local_rpc, self._kw())
                self._ipc = proof.cuda_ipc
                if proof.shared_memory or proof.cuda_ipc:
                    self._session = _local.LocalTransfers(self._local_rpc, self._kw, self._metadata)
                if proof.shared_memory:
                    self._local = self._session
                else:
                    self._no_local = "the server does not share this host's shared memory" if not proof.same_host else (
                        "the server has shared memory turned off")
            except grpc.RpcError as e:
                self._no_local = "the server refused: %s" % from_rpc_error(e)
            except OSError as e:
                self._no_local = "cannot create shared memory here: %s" % e

    def _shared_memory(self) -> Optional[_local.LocalTransfers]:
        """The shared-memory transfers where the server shares this host (None: the wire)."""
        self._decide_local()
        if self._local is None and self._transfer == "shared_memory":
            raise FailedPrecondition("spgemm: transfer='shared_memory', but %s" % self._no_local)
        return self._local

    def _kw(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        t = self.timeout if timeout is None else timeout
        return {"timeout": t, "metadata": self._metadata}

    def _unary(self, name: str, request: Any) -> Any:
        try:
            return getattr(self._rpc, name)(request, **self._kw())
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    def _amg_unary(self, name: str, request: Any) -> Any:
        try:
            return getattr(self._amg_rpc, name)(request, **self._kw())
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    def _progress(self, progress: Optional[bool]) -> Optional[bool]:
        return self.progress if progress is None else progress

    def _results(
        self, call: Any, progress: Optional[bool], desc: str, local: Optional[_local.LocalTransfers] = None,
        on_device: Optional[Callable[[pb.MatrixHeader], Any]] = None,
    ) -> Tuple[Optional[Any], Optional[MatrixInfo], Optional[JobStats]]:
        """Consumes a ResultPart stream: (matrix, kept, stats). A result written
        into the shared-memory result region (`local`'s, held) is copied out of it;
        one copied into device arrays is `on_device(its header)`.

        Left early (an error, KeyboardInterrupt), the call is cancelled, and a
        kept result already announced is deleted.
        """
        asm: Optional[_wire.Assembler] = None
        matrix: Optional[sp.csr_array] = None
        kept: Optional[MatrixInfo] = None
        stats: Optional[JobStats] = None
        bar: Optional[_progress.Bar] = None
        done = False
        try:
            for part in call:
                if isinstance(part, _wire.RawChunk) or part.WhichOneof("part") == "chunk":
                    chunk = part if isinstance(part, _wire.RawChunk) else part.chunk
                    if asm is None:
                        raise ProtocolError("chunk before header")
                    n = asm.add(chunk)
                    if bar is not None:
                        bar.update(n)
                    continue
                which = part.WhichOneof("part")
                if which == "header":
                    if asm is not None or kept is not None:
                        raise ProtocolError("second header")
                    asm = _wire.Assembler(part.header)
                    total = asm.total_bytes
                    if total is None or total >= _STREAM_TUNING_BYTES:  # None: streamed in panels
                        _malloc.tune_for_streams()
                    bar = _progress.Bar(self._progress(progress), asm.total_bytes, desc)
                elif which == "kept":
                    kept = MatrixInfo.from_proto(part.kept)
                elif which == "in_region":
                    if local is None or matrix is not None:
                        raise ProtocolError("a result in a region that was not asked for")
                    matrix = local.read(part.in_region)
                elif which == "on_device":
                    if on_device is None or matrix is not None:
                        raise ProtocolError("a result in device arrays that were not asked for")
                    matrix = on_device(part.on_device)
                elif which == "stats":
                    stats = JobStats.from_proto(part.stats)
            done = True
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        finally:
            if bar is not None:
                bar.close()
            if not done:
                call.cancel()
                if kept is not None:
                    with contextlib.suppress(SpgemmError):
                        self.delete(kept.handle)
        if stats is not None:
            self.last_stats = stats
        if asm is not None:
            matrix = asm.finish()
        return matrix, kept, stats

    def _product(self, call: Any, keep: bool, progress: Optional[bool], desc: str) -> Union[sp.csr_array, RemoteMatrix]:
        matrix, kept, _ = self._results(call, progress, desc)
        if keep:
            if kept is None:
                raise ProtocolError("kept result without its handle")
            return RemoteMatrix(self, kept)
        if matrix is None:
            raise ProtocolError("result stream without a header")
        return matrix

    def _run_product(
        self, method: str, request: Callable[[pb.ProductOutput], Any], keep: bool, name: str,
        progress: Optional[bool], desc: str, device: Optional[Tuple[str, Any, Optional[int]]] = None,
    ) -> Any:
        """Calls a product method with the request `request(output=...)` builds; streams, keeps,
        or (with shared memory) has the result written into the result region. With `device`
        (kind, an operand of that kind, C's rows where known) and not `keep`, C comes back as a
        device matrix of that kind."""
        if device is not None and not keep:
            return self._device_result(method, request, name, progress, desc, *device)
        local = None if keep else self._shared_memory()
        if local is None:
            call = getattr(self._rpc, method)(request(output=self._output(keep, name)), **self._kw())
            return self._product(call, keep, progress, desc)
        with local.result_range() as region:
            call = getattr(self._rpc, method)(request(output=pb.ProductOutput(name=name, region=region)), **self._kw())
            matrix, kept, _ = self._results(call, progress, desc, local)
        if matrix is not None:
            return matrix
        if kept is None:
            raise ProtocolError("a result neither written into the region nor kept")
        # Larger than the region: the server kept it; into a region of its size, deleted by that call.
        try:
            return self._download_local(local, kept.handle, kept.shape[0], kept.nnz, kept.dtype.itemsize, True)
        except BaseException:
            with contextlib.suppress(SpgemmError):  # where the download never reached it
                self.delete(kept.handle)
            raise

    def _device_result(
        self, method: str, request: Callable[[pb.ProductOutput], Any], name: str, progress: Optional[bool],
        desc: str, kind: str, like: Any, rows: Optional[int],
    ) -> Any:
        """A product's result as a device matrix of `kind`: copied by the server into this client's
        result buffer (CUDA IPC) and out of it into arrays of its own, one call; where it does not
        fit (the buffer grows for the next), C's rows are unknown, the buffer is in use or the
        server cannot, kept and downloaded."""
        buffer = None
        if rows is not None and self.cuda_ipc:
            buffer = self._device_buffer(self._result_buffers, _cuda.ResultBuffer, kind, "spgemm-result")
        if buffer is not None and buffer.lock.acquire(blocking=False):
            try:
                views = buffer.arrays(like, rows)

                def copied(h: pb.MatrixHeader) -> Any:
                    if h.rows != rows or h.nnz < 0 or h.nnz > views[1].shape[0]:
                        raise ProtocolError("the server copied a result of another shape into device arrays")
                    return _cuda.copied_out(kind, (int(h.rows), int(h.cols)), int(h.nnz),
                                            h.value_type == pb.FLOAT32, views)

                output = pb.ProductOutput(name=name, device=buffer.refs(*views))
                call = getattr(self._rpc, method)(request(output=output), **self._kw())
                matrix, kept, _ = self._results(call, progress, desc, on_device=copied)
                if matrix is not None:
                    return matrix
                if kept is None:
                    raise ProtocolError("a result neither copied into device arrays nor kept")
                buffer.arrays(like, kept.shape[0], kept.nnz)  # room for it next time
            finally:
                buffer.lock.release()
            return self._device_product(RemoteMatrix(self, kept), kind)
        return self._device_product(self._run_product(method, request, True, name, progress, desc), kind)

    def _device_buffer(self, buffers: Dict[str, Any], make: Callable[..., Any], kind: str, label: str) -> Any:
        """The client's device buffer of class `make` for matrices of `kind`, made on first use."""
        with self._local_lock:
            if kind not in buffers:
                buffers[kind] = make(kind, label, self._session)
            return buffers[kind]

    def _download_local(
        self, local: _local.LocalTransfers, handle: str, rows: int, nnz: int, value_size: int,
        then_delete: bool = False,
    ) -> sp.csr_array:
        """A stored matrix written into the result region (grown to its size) and copied out."""
        with local.result_range(_local.layout(rows, nnz, value_size)["bytes"]) as region:
            request = pb.DownloadRequest(handle=handle, region=region, then_delete=then_delete)
            call = self._rpc.Download(request, **self._kw())
            matrix, _, _ = self._results(call, False, "download", local)
        if matrix is None:
            raise ProtocolError("download without a result")
        return matrix

    def _call_operands(self, operands: Sequence[Tuple[str, Any]]) -> Optional[Any]:
        """Where the server shares this host: a context manager giving a product request's operand
        fields (operands: the request field of each, a handle or a matrix), the local operands as
        `<field>_device`s (CuPy, PyTorch: by CUDA IPC) or `<field>_region`s for the product to
        read itself -- one round trip instead of an upload, the product and a delete each. None
        where the operands go by upload instead."""
        if any(_cuda.kind_of(op) is not None for _, op in operands):
            return self._device_operands(operands)
        return self._region_operands(operands)

    def _stored_handle(self, op: Any) -> Optional[str]:
        """The handle an operand names (a RemoteMatrix of this client's, or a handle), else None."""
        if isinstance(op, RemoteMatrix):
            if op.client is not self:
                raise ValueError("spgemm: %r belongs to another client" % op)
            return op.handle
        return op if isinstance(op, str) else None

    def _device_operands(self, operands: Sequence[Tuple[str, Any]]) -> Optional[Any]:
        """The device matrices as `<field>_device`s, where the server takes CUDA IPC and every other
        operand is stored (else None: a host matrix beside them goes by upload, as they do then)."""
        if not self.cuda_ipc:
            return None
        fields: Dict[str, Any] = {}
        held: List[Tuple[str, _cuda.DeviceMatrix]] = []  # the arrays the server reads, alive until the call ends
        for key, op in operands:
            handle = self._stored_handle(op)
            if handle is not None:
                fields[key] = handle
            elif _cuda.kind_of(op) is not None:
                held.append((key, _cuda.device_matrix(op)))
            else:
                return None
        kind = held[0][1].kind
        staging = self._device_buffer(self._operand_buffers, _cuda.OperandBuffer, kind, "spgemm-operands")
        # In the client's operand region (one the server holds open) where it is free and the operands
        # small enough to keep a copy of; else by their own allocations' handles.
        staged = (all(d.kind == kind for _, d in held) and sum(d.nbytes for _, d in held) <= _DEVICE_OPERAND_BYTES
                  and staging.lock.acquire(blocking=False))
        try:
            like = held[0][1].indptr
            arrays = staging.stage(like, [d for _, d in held]) if staged else [_cuda.csr_refs(d) for _, d in held]
        except BaseException:
            if staged:
                staging.lock.release()
            raise
        for (key, d), refs in zip(held, arrays):
            fields[key + "_device"] = pb.DeviceUploadRequest(header=_device_header(d, "", None), arrays=refs)

        @contextlib.contextmanager
        def holding() -> Iterator[Dict[str, Any]]:
            try:
                yield fields
            finally:
                held.clear()
                if staged:
                    staging.lock.release()

        return holding()

    def _region_operands(self, operands: Sequence[Tuple[str, Any]]) -> Optional[Any]:
        """The local operands (at most _REGION_OPERAND_BYTES of them) as `<field>_region`s in the
        upload region, where the server shares this host's memory; None where there are none such
        (larger ones go by upload: the region would be held for the whole product)."""
        local = self._shared_memory()
        if local is None:
            return None
        fields: Dict[str, str] = {}
        matrices: List[Tuple[str, Any]] = []
        for key, op in operands:
            handle = self._stored_handle(op)
            if handle is not None:
                fields[key] = handle
            elif sp.issparse(op) and 12 * op.nnz > _REGION_OPERAND_BYTES:
                return None  # large: not converted here only to be converted again by the upload
            else:
                csr = _wire.to_csr(op)
                matrices.append((key, (_header_of(csr, "", 0), csr.indptr, csr.indices, csr.data)))
        nbytes = sum(m[1].nbytes + m[2].nbytes + m[3].nbytes for _, m in matrices)
        if not matrices or nbytes > _REGION_OPERAND_BYTES:
            return None

        @contextlib.contextmanager
        def held() -> Iterator[Dict[str, Any]]:
            with local.operands([m for _, m in matrices]) as requests:
                yield {**fields, **{key + "_region": r for (key, _), r in zip(matrices, requests)}}

        return held()

    @contextlib.contextmanager
    def _handles(self, operands: Sequence[Any], progress: Optional[bool]) -> Iterator[List[str]]:
        """Handles of the operands, uploading local ones for the duration of the block."""
        temps: List[RemoteMatrix] = []
        seen: Dict[int, str] = {}
        try:
            handles = []
            for op in operands:
                handle = self._stored_handle(op)
                if handle is not None:
                    handles.append(handle)
                elif id(op) in seen:
                    handles.append(seen[id(op)])
                else:
                    r = self.upload(op, progress=progress)
                    temps.append(r)
                    seen[id(op)] = r.handle
                    handles.append(r.handle)
            yield handles
        finally:
            for r in temps:
                with contextlib.suppress(SpgemmError):
                    r.delete()

    def _output(self, keep: bool, name: str) -> pb.ProductOutput:
        return pb.ProductOutput(keep=keep, name=name, chunk_bytes=0 if keep else self.chunk_bytes)

    # -- matrices -----------------------------------------------------------

    def upload(
        self,
        matrix: Any,
        name: Optional[str] = None,
        *,
        dtype: Any = None,
        ttl: Optional[float] = None,
        progress: Optional[bool] = None,
    ) -> RemoteMatrix:
        """Stores a matrix on the server.

        Args:
            matrix: any scipy.sparse matrix or array (or a dense 2-D array);
                sent as canonical CSR (sorted indices, duplicates summed). A
                cupyx.scipy.sparse matrix or a CUDA sparse torch tensor crosses
                device to device by CUDA IPC where the server shares this host
                and its GPUs (:attr:`cuda_ipc`), else through host memory.
            name: free text shown by :meth:`list`.
            dtype: float32 or float64; default: float32 stays float32, other
                floats and integers become float64.
            ttl: seconds of disuse after which the server deletes it (None:
                the server's default).
            progress: a progress bar (see :class:`Client`).
        """
        if _cuda.kind_of(matrix) is not None:
            d = _cuda.device_matrix(matrix, dtype)
            if not self.cuda_ipc:
                return self.upload(_cuda.to_host(d), name, ttl=ttl, progress=progress)
            return self._upload_device(d, name or "", ttl)
        csr = _wire.to_csr(matrix, dtype)
        header = _header_of(csr, name or "", int(ttl) if ttl else 0)
        local = self._shared_memory()
        if local is not None:
            return local.upload(header, csr.indptr, csr.indices, csr.data, self._stored)
        total = csr.indptr.nbytes + csr.indices.nbytes + csr.data.nbytes
        if total >= _STREAM_TUNING_BYTES:
            _malloc.tune_for_streams()
        with _progress.Bar(self._progress(progress), total, "upload") as bar:
            parts = _wire.upload_parts(header, csr, self.chunk_bytes, bar.update)
            return self._stored(self._rpc.Upload.future(parts, **self._kw()))

    def _stored(self, call: Any) -> RemoteMatrix:
        """The matrix an upload call (a future of its MatrixInfo) stored.

        Interrupted (KeyboardInterrupt), the upload ends; one that completed
        meanwhile is deleted, as no caller will own it.
        """
        try:
            info = call.result()
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        except BaseException:
            if not call.cancel() and call.exception() is None:
                with contextlib.suppress(SpgemmError):
                    self.delete(call.result().handle)
            raise
        return RemoteMatrix(self, MatrixInfo.from_proto(info))

    def _upload_device(self, d: _cuda.DeviceMatrix, name: str, ttl: Optional[float]) -> RemoteMatrix:
        """Stores a device matrix by CUDA IPC: the server copies it device to device."""
        request = pb.DeviceUploadRequest(header=_device_header(d, name, ttl), arrays=_cuda.csr_refs(d))
        return self._stored(self._local_rpc.UploadFromDevice.future(request, **self._kw()))

    def _download_device(self, info: MatrixInfo, kind: str, like: Any = None, then_delete: bool = False) -> Any:
        """A stored matrix as a CuPy or PyTorch matrix: copied device to device into arrays of
        this process (CUDA IPC), or through host memory where the server cannot; deleted on the
        server with `then_delete`."""
        if not self.cuda_ipc:
            matrix = _cuda.from_host(kind, self.download(info.handle))
            if then_delete:
                self.delete(info.handle)
            return matrix
        rows, nnz = info.shape[0], info.nnz
        d = _cuda.DeviceMatrix(kind, info.shape, *_cuda.empty_csr(kind, like, rows, nnz, info.dtype.name))
        request = pb.DownloadRequest(handle=info.handle, device=_cuda.csr_refs(d), then_delete=then_delete)
        call = self._rpc.Download(request, **self._kw())
        try:
            written = [part for part in call if part.WhichOneof("part") == "on_device"]
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        if len(written) != 1:
            raise ProtocolError("a download into device arrays without its on_device message")
        return _cuda.from_arrays(kind, info.shape, d.indptr, d.indices, d.data)

    def _device_product(self, kept: "RemoteMatrix", kind: str) -> Any:
        """A kept result as a device matrix of `kind`, deleted on the server by its download."""
        try:
            matrix = self._download_device(kept.info, kind, then_delete=True)
        except BaseException:
            with contextlib.suppress(SpgemmError):  # where the download never reached it
                kept.delete()
            raise
        kept.deleted = True
        return matrix

    def matrix(self, handle: str) -> RemoteMatrix:
        """A RemoteMatrix for an existing handle (NotFound if there is none)."""
        return RemoteMatrix(self, self.describe(handle))

    def download(self, matrix: Union[RemoteMatrix, str], *, progress: Optional[bool] = None, into: str = "scipy") -> Any:
        """Downloads a stored matrix: a scipy.sparse.csr_array, or with ``into="cupy"`` a
        cupyx.scipy.sparse.csr_matrix, with ``into="torch"`` a CUDA sparse CSR tensor (by CUDA IPC
        where the server shares this host and its GPUs, else through host memory)."""
        handle = matrix.handle if isinstance(matrix, RemoteMatrix) else matrix
        if into in ("cupy", "torch"):
            return self._download_device(matrix.info if isinstance(matrix, RemoteMatrix) else self.describe(handle), into)
        if into != "scipy":
            raise ValueError("spgemm: into must be 'scipy', 'cupy' or 'torch', not %r" % into)
        local = self._shared_memory()
        if local is not None:
            info = matrix.info if isinstance(matrix, RemoteMatrix) else self.describe(handle)
            return self._download_local(local, handle, info.shape[0], info.nnz, info.dtype.itemsize)
        call = self._rpc.Download(pb.DownloadRequest(handle=handle, chunk_bytes=self.chunk_bytes), **self._kw())
        result, _, _ = self._results(call, progress, "download")
        if result is None:
            raise ProtocolError("download without a header")
        return result

    def delete(self, matrix: Union[RemoteMatrix, str]) -> int:
        """Deletes a stored matrix; returns the bytes freed (NotFound if unknown)."""
        if isinstance(matrix, RemoteMatrix):
            matrix.delete()
            return 0
        return int(self._unary("Delete", pb.DeleteRequest(handle=matrix)).freed_bytes)

    def describe(self, matrix: Union[RemoteMatrix, str]) -> MatrixInfo:
        """Server-side information on a stored matrix (NotFound if unknown)."""
        handle = matrix.handle if isinstance(matrix, RemoteMatrix) else matrix
        return MatrixInfo.from_proto(self._unary("Describe", pb.DescribeRequest(handle=handle)))

    def update_values(self, matrix: Union[RemoteMatrix, str], values: Any) -> MatrixInfo:
        """Replaces a stored matrix's values, keeping its handle and pattern.

        ``values``: a scipy.sparse matrix of the same pattern (canonical CSR),
        or the nnz values in the stored matrix's CSR order. A product or
        Galerkin product of matrices whose values changed then reruns numeric
        only while its last result is kept; a hierarchy is set up again with
        :meth:`Hierarchy.resetup`.
        """
        handle = matrix.handle if isinstance(matrix, RemoteMatrix) else matrix
        info = self.describe(handle)
        if sp.issparse(values):
            csr = sp.csr_array(values)
            csr.sum_duplicates()
            csr.sort_indices()
            values = csr.data
        v = np.ascontiguousarray(np.asarray(values, dtype=info.dtype).ravel())
        if v.shape[0] != info.nnz:
            raise ValueError("spgemm: %s holds %d values; got %d" % (handle, info.nnz, v.shape[0]))
        step = max(1, self.chunk_bytes // v.itemsize)

        def parts() -> Iterator[Any]:
            yield vpb.ValuesPart(header=vpb.ValuesHeader(handle=handle, value_type=_wire.value_type_of(v.dtype),
                                                         nnz=info.nnz))
            for first in range(0, v.shape[0], step):
                chunk = v[first : first + step].astype(v.dtype.newbyteorder("<"), copy=False).tobytes()
                yield vpb.ValuesPart(chunk=vpb.ValuesChunk(first=first, values=chunk))

        try:
            reply = self._values_rpc.UpdateValues(parts(), **self._kw())
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        return MatrixInfo.from_proto(reply)

    def amg(
        self,
        a: Operand,
        near_nullspace: Any = None,
        *,
        theta: float = 0.0,
        coarse_theta: Optional[float] = None,
        max_coarse: int = 1000,
        max_levels: int = 10,
        omega: float = 4.0 / 3.0,
        spectral_steps: int = 15,
        block_size: int = 0,
        algorithm: str = "auto",
        name: str = "",
        priority: int = 0,
        progress: Optional[bool] = None,
    ) -> Hierarchy:
        """A smoothed-aggregation hierarchy of ``a`` (square, float64), set up on the server.

        ``a``: a RemoteMatrix or handle (it must outlive the hierarchy), or a
        local matrix (uploaded, deleted with the hierarchy). ``near_nullspace``:
        an n x m array (elasticity: the rigid-body modes); ``None``: the
        constant. ``theta``: strength threshold; ``coarse_theta``: at least
        this threshold below the first level (``None``: the server's, 0.05);
        ``max_coarse``: coarsen until
        a level has at most this many rows; ``omega``: the prolongator's Jacobi
        weight (over rho(D^-1 A)); ``block_size``: unknowns per node (0: found
        from A's dense blocks); ``algorithm``: the products' method.
        """
        owned: Optional[RemoteMatrix] = None
        if isinstance(a, RemoteMatrix):
            handle = a.handle
        elif isinstance(a, str):
            handle = a
        else:
            owned = self.upload(sp.csr_array(a, dtype=np.float64), name or "amg", progress=progress)
            handle = owned.handle
        try:
            b_handle = ""
            with contextlib.ExitStack() as stack:
                if near_nullspace is not None:
                    modes = np.asarray(near_nullspace, dtype=np.float64)
                    if modes.ndim == 1:
                        modes = modes[:, None]
                    # Every entry stored, zeros too: the server reads the rows whole.
                    rows, cols = modes.shape
                    dense = sp.csr_array((modes.ravel(), np.tile(np.arange(cols), rows),
                                          np.arange(0, rows * cols + 1, cols)), shape=modes.shape)
                    b = stack.enter_context(self.upload(dense, "near null space", progress=progress))
                    b_handle = b.handle
                options = apb.AmgSetupOptions(
                    strength_theta=theta, max_coarse=max_coarse, max_levels=max_levels, prolongator_omega=omega,
                    spectral_steps=spectral_steps, block_size=block_size, near_nullspace=b_handle,
                    algorithm=algorithm)
                if coarse_theta is not None:
                    options.coarse_strength_theta = coarse_theta
                reply = self._amg_unary("Setup", apb.AmgSetupRequest(matrix=handle, options=options, name=name,
                                                                     priority=priority))
            return Hierarchy(self, reply, owned)
        except BaseException:
            if owned is not None:
                with contextlib.suppress(SpgemmError):
                    owned.delete()
            raise

    def hierarchy(self, handle: str) -> Hierarchy:
        """The hierarchy ``handle`` (Describe)."""
        return Hierarchy(self, self._amg_unary("Describe", apb.AmgHierarchyRequest(hierarchy=handle)))

    def list(self) -> List[MatrixInfo]:
        """Every matrix the server holds for this caller, oldest first (List's pages, followed)."""
        out: List[MatrixInfo] = []
        token = ""
        while True:
            page = self._unary("List", pb.ListRequest(page_token=token))
            out.extend(MatrixInfo.from_proto(m) for m in page.matrices)
            token = page.next_page_token
            if not token:
                return out

    def status(self) -> ServerStatus:
        """The server's devices, memory budgets and use, cache, queue and version."""
        return ServerStatus.from_proto(self._unary("Status", pb.StatusRequest()))

    # -- products -----------------------------------------------------------

    @overload
    def multiply(
        self,
        a: Operand,
        b: Optional[Operand] = ...,
        algorithm: str = ...,
        dtype: Any = ...,
        progress: Optional[bool] = ...,
        *,
        keep: Literal[False] = ...,
        name: str = ...,
        priority: int = ...,
    ) -> sp.csr_array: ...

    @overload
    def multiply(
        self,
        a: Operand,
        b: Optional[Operand] = ...,
        algorithm: str = ...,
        dtype: Any = ...,
        progress: Optional[bool] = ...,
        *,
        keep: Literal[True],
        name: str = ...,
        priority: int = ...,
    ) -> RemoteMatrix: ...

    def multiply(
        self,
        a: Operand,
        b: Optional[Operand] = None,
        algorithm: str = "auto",
        dtype: Any = None,
        progress: Optional[bool] = None,
        *,
        keep: bool = False,
        name: str = "",
        priority: int = 0,
    ) -> Union[sp.csr_array, RemoteMatrix]:
        """C = A @ B on the server (B defaults to A).

        Args:
            a, b: RemoteMatrix objects, handles, or local scipy.sparse matrices
                (with shared memory, read by the product from this client's
                upload region; else uploaded for the call and deleted
                afterwards); or CuPy
                (cupyx.scipy.sparse) or PyTorch (CUDA sparse) matrices: then C
                comes back as the same, device to device by CUDA IPC where
                the server shares this host and its GPUs.
            algorithm: "auto" or a method name the server knows.
            dtype: the result's float32/float64 (None: the wider operand's).
            progress: a progress bar (see :class:`Client`).
            keep: store C on the server and return a RemoteMatrix instead of
                downloading it.
            name: name of the kept result.
            priority: higher runs first.

        Returns:
            C as a scipy.sparse.csr_array (or the device matrix type of the
            operands), or a RemoteMatrix with ``keep=True``. The server's
            figures are in :attr:`last_stats`.
        """
        # CuPy or PyTorch in: the same out, device to device.
        device = _device_output(a, b, rows=_shape_of(a, 0))
        options = pb.MultiplyOptions(algorithm=algorithm, output_type=_wire.output_type_of(dtype), priority=priority)
        # B = A: the server takes A's region once for both (a local A sends no B).
        same = b is None or b is a
        local_a = not isinstance(a, (RemoteMatrix, str))
        operands = self._call_operands([("a", a)] if same and local_a else [("a", a), ("b", a if same else b)])
        if operands is not None:
            with operands as fields:
                request = functools.partial(pb.MultiplyRequest, options=options, **fields)
                return self._run_product("Multiply", request, keep, name, progress, "multiply", device)
        with self._handles([a, a if b is None else b], progress) as (ha, hb):
            request = functools.partial(pb.MultiplyRequest, a=ha, b=hb, options=options)
            return self._run_product("Multiply", request, keep, name, progress, "multiply", device)

    def galerkin(
        self,
        p: Operand,
        a: Operand,
        form: str = "ptap",
        algorithm: str = "auto",
        dtype: Any = None,
        progress: Optional[bool] = None,
        *,
        keep: bool = False,
        name: str = "",
        priority: int = 0,
    ) -> Union[sp.csr_array, RemoteMatrix]:
        """The Galerkin product P^T A P (form="ptap") or P A P^T (form="papt") on the server.

        Operands and the other arguments are as for :meth:`multiply`.
        """
        try:
            f = _FORMS[form.lower().replace("^", "").replace(" ", "")]
        except KeyError:
            raise ValueError("spgemm: form must be 'ptap' or 'papt', not %r" % form) from None
        device = _device_output(p, a, rows=_shape_of(p, 1 if f == pb.PT_A_P else 0))
        options = pb.MultiplyOptions(algorithm=algorithm, output_type=_wire.output_type_of(dtype), priority=priority)
        operands = self._call_operands([("p", p), ("a", a)])
        if operands is not None:
            with operands as fields:
                request = functools.partial(pb.GalerkinRequest, form=f, options=options, **fields)
                return self._run_product("Galerkin", request, keep, name, progress, "galerkin", device)
        with self._handles([p, a], progress) as (hp, ha):
            request = functools.partial(pb.GalerkinRequest, p=hp, a=ha, form=f, options=options)
            return self._run_product("Galerkin", request, keep, name, progress, "galerkin", device)

    def transpose(
        self,
        a: Operand,
        progress: Optional[bool] = None,
        *,
        keep: bool = False,
        name: str = "",
    ) -> Union[sp.csr_array, RemoteMatrix]:
        """A^T on the server; local or remote operand, local result (or kept with ``keep=True``)."""
        device = _device_output(a, None, rows=_shape_of(a, 1))
        operands = self._call_operands([("a", a)])
        if operands is not None:
            with operands as fields:
                return self._run_product("Transpose", functools.partial(pb.TransposeRequest, **fields), keep, name,
                                         progress, "transpose", device)
        with self._handles([a], progress) as (ha,):
            request = functools.partial(pb.TransposeRequest, a=ha)
            return self._run_product("Transpose", request, keep, name, progress, "transpose", device)

    # -- lifetime -----------------------------------------------------------

    def close(self) -> None:
        """Closes the channel (stored matrices stay on the server; shared-memory regions and the
        device result buffers go)."""
        with self._local_lock:
            for buffer in list(self._result_buffers.values()) + list(self._operand_buffers.values()):
                buffer.drop()  # unregistered before freed
            self._result_buffers.clear()
            self._operand_buffers.clear()
            if self._session is not None:
                self._session.close()
            self._session = self._local = None
            self._local_decided = True
        # grpc's Channel.close waits until every call's state has ended; a stream
        # whose reading a KeyboardInterrupt cut short inside grpc can leave one that
        # never ends (Ctrl-C during a product, now and then). So the close is waited
        # for a few seconds, then left to finish, or not, on its own thread.
        closer = threading.Thread(target=self._channel.close, name="spgemm-close", daemon=True)
        closer.start()
        closer.join(_CLOSE_WAIT_SECONDS)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return "<spgemm.Client %s>" % self.address
