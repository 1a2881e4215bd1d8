"""The spgemmd client: :class:`Client` and :class:`RemoteMatrix`."""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union, overload

try:  # Python 3.8+
    from typing import Literal
except ImportError:  # pragma: no cover
    from typing_extensions import Literal  # type: ignore

import grpc
import numpy as np
import scipy.sparse as sp

from . import _address, _progress, _wire
from .errors import NotFound, ProtocolError, SpgemmError, from_rpc_error
from .amg import Hierarchy
from .info import JobStats, MatrixInfo, ServerStatus
from .v1 import amg_pb2 as apb
from .v1 import spgemm_pb2 as pb
from .v1 import values_pb2 as vpb

__all__ = ["Client", "RemoteMatrix", "Operand"]

#: What the product methods accept: a RemoteMatrix, a handle string, or any
#: scipy.sparse matrix/array (or dense 2-D array), uploaded for the call.
Operand = Union["RemoteMatrix", str, Any]

_MAX_RECEIVE = 256 << 20


class _Rpcs:
    """Callables for every method of a spgemm.v1 service, derived from the generated descriptor.

    Building them from the descriptor (instead of importing the generated
    ``*_pb2_grpc``) keeps the client working with a grpcio runtime older
    than the grpcio-tools that generated the code, and lets Upload and the
    result streams use the zero-copy chunk codec.
    """

    def __init__(self, channel: grpc.Channel, module: Any = pb, service: str = "Spgemm") -> None:
        descriptor = module.DESCRIPTOR.services_by_name[service]
        for method in descriptor.methods:
            path = "/%s/%s" % (descriptor.full_name, method.name)
            req_cls = getattr(module, method.input_type.name, None) or getattr(pb, method.input_type.name)
            resp_cls = getattr(module, method.output_type.name, None) or getattr(pb, method.output_type.name)
            ser: Callable[[Any], bytes] = req_cls.SerializeToString
            de: Callable[[bytes], Any] = resp_cls.FromString
            if req_cls is pb.UploadPart:
                ser = _wire.serialize_upload_part
            if resp_cls is pb.ResultPart:
                de = _wire.parse_result_part
            factory = {
                (False, False): channel.unary_unary,
                (True, False): channel.stream_unary,
                (False, True): channel.unary_stream,
                (True, True): channel.stream_stream,
            }[(method.client_streaming, method.server_streaming)]
            setattr(self, method.name, factory(path, request_serializer=ser, response_deserializer=de))


def _output_type(dtype: Any) -> int:
    return pb.VALUE_TYPE_UNSPECIFIED if dtype is None else _wire.value_type_of(dtype)


_FORMS = {"ptap": pb.PT_A_P, "pt_a_p": pb.PT_A_P, "papt": pb.P_A_PT, "p_a_pt": pb.P_A_PT}


class RemoteMatrix:
    """A matrix stored on the server, known by its handle.

    Use it as a context manager to delete it on exit. ``A @ B`` on two remote
    matrices of the same client multiplies them on the server and keeps the
    result there (a new RemoteMatrix); ``fetch()`` downloads a matrix.
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


class Client:
    """A connection to an spgemmd server.

    Args:
        address: ``host:port`` of the server; port 50051 where none is given;
            default: ``SPGEMM_SERVER``, else ``localhost:50051``.
        token: a bearer token sent as ``authorization: Bearer <token>`` metadata.
        tls: ``None``/``False`` for a plaintext channel, ``True`` for TLS with the
            system's roots, a path to a PEM file of root certificates, or
            ``grpc.ChannelCredentials``.
        timeout: default deadline in seconds of every call (``None``: none).
        chunk_bytes: size of the chunks uploads send and downloads ask for
            (default 2 MiB; keep it well under gRPC's 4 MiB message limit).
        progress: default for the ``progress`` argument of transfers (``None``:
            a tqdm bar when stderr is a terminal and a transfer takes over a second).
        options: extra gRPC channel options.

    The client is a context manager; leaving it closes the channel.

    A KeyboardInterrupt (Ctrl-C) during a call cancels it on the server (its
    job stops) and deletes the operands uploaded for it before it propagates.
    """

    def __init__(
        self,
        address: Optional[str] = None,
        *,
        token: Optional[str] = None,
        tls: Union[None, bool, str, grpc.ChannelCredentials] = None,
        timeout: Optional[float] = None,
        chunk_bytes: int = _wire.DEFAULT_CHUNK_BYTES,
        progress: Optional[bool] = None,
        options: Sequence[Tuple[str, Any]] = (),
    ) -> None:
        if chunk_bytes < 1024:
            raise ValueError("spgemm: chunk_bytes must be at least 1024")
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
        opts = [("grpc.max_receive_message_length", _MAX_RECEIVE), ("grpc.max_send_message_length", -1)]
        opts += list(options)
        if tls is None or tls is False:
            self._channel = grpc.insecure_channel(address, options=opts)
        else:
            if tls is True:
                creds = grpc.ssl_channel_credentials()
            elif isinstance(tls, str):
                with open(tls, "rb") as f:
                    creds = grpc.ssl_channel_credentials(root_certificates=f.read())
            else:
                creds = tls
            self._channel = grpc.secure_channel(address, creds, options=opts)
        self._rpc = _Rpcs(self._channel)
        self._values_rpc = _Rpcs(self._channel, vpb, "Values")
        self._amg_rpc = _Rpcs(self._channel, apb, "Amg")

    # -- plumbing -----------------------------------------------------------

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
        self, call: Any, progress: Optional[bool], desc: str
    ) -> Tuple[Optional[sp.csr_array], Optional[MatrixInfo], Optional[JobStats]]:
        """Consumes a ResultPart stream: (matrix, kept, stats).

        Left early (an error, KeyboardInterrupt), the call is cancelled, and a
        kept result already announced is deleted.
        """
        asm: Optional[_wire.Assembler] = None
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
                    bar = _progress.Bar(self._progress(progress), asm.total_bytes, desc)
                elif which == "kept":
                    kept = MatrixInfo.from_proto(part.kept)
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
        matrix = asm.finish() if asm is not None else None
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

    @contextlib.contextmanager
    def _handles(self, operands: Sequence[Any], progress: Optional[bool]) -> Iterator[List[str]]:
        """Handles of the operands, uploading local ones for the duration of the block."""
        temps: List[RemoteMatrix] = []
        seen: Dict[int, str] = {}
        try:
            handles = []
            for op in operands:
                if isinstance(op, RemoteMatrix):
                    if op.client is not self:
                        raise ValueError("spgemm: %r belongs to another client" % op)
                    handles.append(op.handle)
                elif isinstance(op, str):
                    handles.append(op)
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
                sent as canonical CSR (sorted indices, duplicates summed).
            name: free text shown by :meth:`list`.
            dtype: float32 or float64; default: float32 stays float32, other
                floats and integers become float64.
            ttl: seconds of disuse after which the server deletes it (None:
                the server's default).
            progress: a progress bar (see :class:`Client`).
        """
        csr = _wire.to_csr(matrix, dtype)
        header = pb.MatrixHeader(
            rows=csr.shape[0],
            cols=csr.shape[1],
            nnz=csr.nnz,
            value_type=_wire.value_type_of(csr.data.dtype),
            index_type=pb.INT32,
            name=name or "",
            ttl_seconds=int(ttl) if ttl else 0,
        )
        total = csr.indptr.nbytes + csr.indices.nbytes + csr.data.nbytes
        with _progress.Bar(self._progress(progress), total, "upload") as bar:
            parts = _wire.upload_parts(header, csr, self.chunk_bytes, bar.update)
            call = self._rpc.Upload.future(parts, **self._kw())
            try:
                info = call.result()
            except grpc.RpcError as e:
                raise from_rpc_error(e) from None
            except BaseException:
                # Interrupted (KeyboardInterrupt): end the upload; one that
                # completed meanwhile is deleted, as no caller will own it.
                if not call.cancel() and call.exception() is None:
                    with contextlib.suppress(SpgemmError):
                        self.delete(call.result().handle)
                raise
        return RemoteMatrix(self, MatrixInfo.from_proto(info))

    def matrix(self, handle: str) -> RemoteMatrix:
        """A RemoteMatrix for an existing handle (NotFound if there is none)."""
        return RemoteMatrix(self, self.describe(handle))

    def download(self, matrix: Union[RemoteMatrix, str], *, progress: Optional[bool] = None) -> sp.csr_array:
        """Downloads a stored matrix as a scipy.sparse.csr_array."""
        handle = matrix.handle if isinstance(matrix, RemoteMatrix) else matrix
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
        constant. ``theta``: strength threshold; ``max_coarse``: coarsen until
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
        """Every matrix the server holds for this caller."""
        return [MatrixInfo.from_proto(m) for m in self._unary("List", pb.ListRequest()).matrices]

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
                (uploaded for the call and deleted afterwards).
            algorithm: "auto" or a method name the server knows.
            dtype: the result's float32/float64 (None: the wider operand's).
            progress: a progress bar (see :class:`Client`).
            keep: store C on the server and return a RemoteMatrix instead of
                downloading it.
            name: name of the kept result.
            priority: higher runs first.

        Returns:
            C as a scipy.sparse.csr_array, or a RemoteMatrix with ``keep=True``.
            The server's figures are in :attr:`last_stats`.
        """
        options = pb.MultiplyOptions(algorithm=algorithm, output_type=_output_type(dtype), priority=priority)
        with self._handles([a, a if b is None else b], progress) as (ha, hb):
            request = pb.MultiplyRequest(a=ha, b=hb, options=options, output=self._output(keep, name))
            call = self._rpc.Multiply(request, **self._kw())
            return self._product(call, keep, progress, "multiply")

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
        options = pb.MultiplyOptions(algorithm=algorithm, output_type=_output_type(dtype), priority=priority)
        with self._handles([p, a], progress) as (hp, ha):
            request = pb.GalerkinRequest(p=hp, a=ha, form=f, options=options, output=self._output(keep, name))
            call = self._rpc.Galerkin(request, **self._kw())
            return self._product(call, keep, progress, "galerkin")

    def transpose(
        self,
        a: Operand,
        progress: Optional[bool] = None,
        *,
        keep: bool = False,
        name: str = "",
    ) -> Union[sp.csr_array, RemoteMatrix]:
        """A^T on the server; local or remote operand, local result (or kept with ``keep=True``)."""
        with self._handles([a], progress) as (ha,):
            request = pb.TransposeRequest(a=ha, output=self._output(keep, name))
            call = self._rpc.Transpose(request, **self._kw())
            return self._product(call, keep, progress, "transpose")

    # -- lifetime -----------------------------------------------------------

    def close(self) -> None:
        """Closes the channel (stored matrices stay on the server)."""
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return "<spgemm.Client %s>" % self.address
