"""Several spgemmd servers used as one: :class:`Cluster`.

    >>> with spgemm.Cluster(["gpu1:50051", "gpu2:50051", "gpu3:50051"], timeout=600) as cluster:
    ...     Cs = cluster.multiply_all([(A1, B1), (A2, B2), A3])   # independent jobs, spread
    ...     C = cluster.multiply_panels(A, B)                    # one product, split by rows of A

Independent jobs go to the live server with the fewest outstanding jobs
(round robin on ties). ``multiply_panels`` splits A into row panels balanced
by nnz, uploads B to every server, multiplies the panels in parallel and
stacks the row blocks back in order. A server that fails a call with
UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, ABORTED, INTERNAL, UNKNOWN, a cut
stream, or NOT_FOUND on a handle the cluster stored itself (the server lost
it) is marked down for ``retry_down_after`` seconds and the job or panel runs
again on another live server; any other error is the input's and is raised at
once. When no server is left, the last error is raised. See docs/scaling.md.
"""

from __future__ import annotations

import concurrent.futures
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple, TypeVar, Union

import grpc
import numpy as np
import scipy.sparse as sp

from . import _address, _wire
from .client import Client, RemoteMatrix
from .errors import InvalidArgument, ProtocolError, SpgemmError, Unavailable
from .info import JobStats, ServerStatus
from .v1 import spgemm_pb2 as pb

__all__ = ["Cluster", "PanelReport", "FAILOVER_CODES", "is_failover_error", "panel_bounds", "split_addresses"]

T = TypeVar("T")

#: Status codes that make a call's server, not its input, the culprit.
FAILOVER_CODES = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.NOT_FOUND,
    }
)


def is_failover_error(error: BaseException) -> bool:
    """Whether a failed call should run again on another server."""
    if isinstance(error, ProtocolError):  # a stream cut short
        return True
    return isinstance(error, SpgemmError) and error.code in FAILOVER_CODES


def split_addresses(addresses: Union[str, Iterable[str]]) -> List[str]:
    """A list of addresses from a comma-separated string (or any iterable of strings)."""
    items = addresses.split(",") if isinstance(addresses, str) else list(addresses)
    return [a.strip() for a in items if a and a.strip()]


def panel_bounds(indptr: Any, panels: int) -> List[int]:
    """Row boundaries ``[0, b1, ..., rows]`` of at most ``panels`` non-empty panels balanced by nnz."""
    indptr = np.asarray(indptr, dtype=np.int64)
    rows = len(indptr) - 1
    if rows <= 0:
        return [0, 0]
    k = max(1, min(int(panels), rows))
    base, nnz = int(indptr[0]), int(indptr[-1] - indptr[0])
    bounds = [0]
    for i in range(1, k):
        if nnz > 0:
            target = base + (nnz * i + k - 1) // k
            cut = int(np.searchsorted(indptr, target, side="left"))
        else:
            cut = rows * i // k
        cut = max(cut, bounds[-1] + 1)
        cut = min(cut, rows - (k - i))
        bounds.append(cut)
    bounds.append(rows)
    return bounds


def _resolve(target: str) -> Tuple[str, List[str]]:
    """``dns:///host:port`` -> (host, every address it resolves to); [] when it does not."""
    rest = target[4:]
    if rest.startswith("//"):
        slash = rest.find("/", 2)
        rest = "" if slash < 0 else rest[slash + 1 :]
    port = str(_address.DEFAULT_PORT)
    if rest.startswith("["):
        close = rest.find("]")
        host = rest[1:close]
        if rest[close + 1 : close + 2] == ":":
            port = rest[close + 2 :]
    else:
        host, sep, p = rest.rpartition(":")
        if not sep:
            host, p = rest, port
        port = p
    try:
        infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except (OSError, ValueError):
        return host, []
    out: List[str] = []
    for family, _, _, _, sockaddr in infos:
        ip = sockaddr[0]
        addr = "[%s]:%s" % (ip, port) if family == socket.AF_INET6 else "%s:%s" % (ip, port)
        if addr not in out:
            out.append(addr)
    return host, out


@dataclass
class PanelReport:
    """What :meth:`Cluster.multiply_panels` did with one panel."""

    row_begin: int
    row_end: int
    nnz: int
    server: int = -1  # index of the server that computed it
    attempts: int = 0  # 1 when no failover was needed
    stats: Optional[JobStats] = None


@dataclass
class _Server:
    address: str
    client: Client
    down_until: float = 0.0
    outstanding: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class Cluster:
    """Several spgemmd servers: jobs spread over them, products split across them.

    Args:
        addresses: a list of ``host:port`` (or one comma-separated string);
            port 50051 where none is given.
            A ``dns:///name:port`` entry is resolved and every address it gives
            becomes a server of its own (stored matrices live on one server,
            so each needs its own channel); a name giving one address (or none
            yet) gets one channel with gRPC's ``round_robin`` policy.
        retry_down_after: seconds a failed server is left out before it is tried again.
        max_parallel: jobs or panels in flight at once (default: 2 per server).
        **client_options: passed to every :class:`Client` (token, tls, root_certificates, timeout, ...).
    """

    def __init__(
        self,
        addresses: Union[str, Sequence[str]],
        *,
        retry_down_after: float = 30.0,
        max_parallel: Optional[int] = None,
        **client_options: Any,
    ) -> None:
        client_options.setdefault("progress", False)
        self.retry_down_after: float = float(retry_down_after)
        self._servers: List[_Server] = []
        self._mu = threading.Lock()
        self._cursor = 0
        self._local = threading.local()
        base_opts = list(client_options.pop("options", ()))
        for address in split_addresses(addresses):
            if address.startswith("dns:"):
                host, resolved = _resolve(address)
                if len(resolved) > 1:
                    for r in resolved:
                        opts = list(base_opts)
                        if any(client_options.get(k) for k in ("tls", "root_certificates", "certificate_chain")):
                            opts.append(("grpc.ssl_target_name_override", host))
                        self._add(r, Client(r, options=opts, **client_options))
                    continue
                opts = base_opts + [("grpc.lb_policy_name", "round_robin")]
                self._add(address, Client(address, options=opts, **client_options))
            else:
                address = _address.with_default_port(address)
                self._add(address, Client(address, options=base_opts, **client_options))
        if not self._servers:
            raise ValueError("spgemm: a cluster needs at least one server address")
        self.max_parallel: int = int(max_parallel) if max_parallel else 2 * len(self._servers)
        #: Per-panel reports of the last :meth:`multiply_panels`.
        self.last_panels: List[PanelReport] = []
        #: Servers marked down during the last :meth:`multiply_panels`.
        self.last_failed: List[int] = []

    def _add(self, address: str, client: Client) -> None:
        self._servers.append(_Server(address, client))

    # -- servers ------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._servers)

    @property
    def addresses(self) -> List[str]:
        return [s.address for s in self._servers]

    @property
    def clients(self) -> List[Client]:
        return [s.client for s in self._servers]

    def is_up(self, server: int) -> bool:
        with self._mu:
            return time.monotonic() >= self._servers[server].down_until

    def mark_down(self, server: int) -> None:
        with self._mu:
            self._servers[server].down_until = time.monotonic() + self.retry_down_after

    def outstanding(self, server: int) -> int:
        with self._mu:
            return self._servers[server].outstanding

    def _acquire(self, exclude: Set[int]) -> Optional[int]:
        """The live server with the fewest outstanding jobs (round robin on ties); its count goes up."""
        with self._mu:
            now = time.monotonic()
            n = len(self._servers)
            best: Optional[int] = None
            for k in range(n):
                i = (self._cursor + k) % n
                s = self._servers[i]
                if i in exclude or now < s.down_until:
                    continue
                if best is None or s.outstanding < self._servers[best].outstanding:
                    best = i
            if best is not None:
                self._servers[best].outstanding += 1
                self._cursor = (best + 1) % n
            return best

    def _release(self, i: int) -> None:
        with self._mu:
            self._servers[i].outstanding -= 1

    # -- independent jobs ---------------------------------------------------

    def run(self, job: Callable[[Client], T]) -> T:
        """Runs ``job(client)`` on the least busy live server, again on another one on a failover error.

        The job must be self-contained (upload what it needs): it may run more
        than once. Its server's index is in :attr:`last_server` (per thread).
        """
        tried: Set[int] = set()
        last: Optional[BaseException] = None
        while True:
            i = self._acquire(tried)
            if i is None:
                if last is not None:
                    raise last
                raise Unavailable("no live server in the cluster")
            try:
                result = job(self._servers[i].client)
            except SpgemmError as e:
                self._release(i)
                if not is_failover_error(e):
                    raise
                self.mark_down(i)
                tried.add(i)
                last = e
                continue
            self._release(i)
            self._local.server = i
            return result

    @property
    def last_server(self) -> Optional[int]:
        """The server that ran this thread's last :meth:`run` (or :meth:`multiply`)."""
        return getattr(self._local, "server", None)

    def submit(self, job: Callable[[Client], T], executor: concurrent.futures.Executor) -> "concurrent.futures.Future[T]":
        """``executor.submit(self.run, job)``."""
        return executor.submit(self.run, job)

    def map(self, job: Callable[[Client, Any], T], items: Iterable[Any]) -> List[T]:
        """``[job(client, item) for item in items]``, spread over the servers in parallel, in order."""
        items = list(items)
        if not items:
            return []
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(len(items), self.max_parallel)) as ex:
            futures = [ex.submit(self.run, (lambda c, it=it: job(c, it))) for it in items]
            try:
                return [f.result() for f in futures]
            except BaseException:
                for f in futures:
                    f.cancel()
                raise

    def multiply(self, a: Any, b: Any = None, **kwargs: Any) -> sp.csr_array:
        """A @ B (B defaults to A) of local matrices on the least busy live server.

        Keyword arguments go to :meth:`Client.multiply` (``keep`` is not
        allowed: a kept result would live on one server).
        """
        if kwargs.get("keep"):
            raise ValueError("spgemm: Cluster.multiply cannot keep results (use a Client)")
        if isinstance(a, (RemoteMatrix, str)) or isinstance(b, (RemoteMatrix, str)):
            raise ValueError("spgemm: Cluster operands must be local matrices, not handles")
        return self.run(lambda c: c.multiply(a, b, **kwargs))

    def multiply_all(self, jobs: Iterable[Any], **kwargs: Any) -> List[sp.csr_array]:
        """Independent products, spread: each job is ``A`` (for A @ A) or ``(A, B)``; results in order."""

        def one(c: Client, job: Any) -> sp.csr_array:
            a, b = (job[0], job[1]) if isinstance(job, tuple) else (job, None)
            return c.multiply(a, b, **kwargs)

        return self.map(one, jobs)

    def status(self) -> List[Optional[ServerStatus]]:
        """Every server's status; None for one that does not answer."""
        out: List[Optional[ServerStatus]] = []
        for s in self._servers:
            try:
                out.append(s.client.status())
            except SpgemmError:
                out.append(None)
        return out

    # -- one product over the servers ---------------------------------------

    def multiply_panels(
        self,
        a: Any,
        b: Any = None,
        panels: Optional[int] = None,
        *,
        algorithm: str = "auto",
        dtype: Any = None,
        priority: int = 0,
        before_attempt: Optional[Callable[[int, int, int], None]] = None,
    ) -> sp.csr_array:
        """C = A @ B split by row panels of A across the servers (B defaults to A).

        A is cut into ``panels`` row panels balanced by nnz (default: one per
        live server), B is uploaded to every server, the panels are multiplied
        in parallel and their row blocks stacked in order. A failed server's
        panels run again on the others (B uploaded there if needed). Every
        handle stored on the servers is deleted at the end. Per-panel details
        are in :attr:`last_panels`.

        ``before_attempt(panel, server, attempt)`` is a test hook called just
        before a panel's attempt is sent.
        """
        a_csr = _canonical(a)
        b_csr = a_csr if b is None else _canonical(b)
        if a_csr.shape[1] != b_csr.shape[0]:
            raise InvalidArgument("shapes do not match: A is %dx%d, B is %dx%d" % (a_csr.shape + b_csr.shape))
        if a_csr.shape[0] == 0:
            self.last_panels, self.last_failed = [], []
            return sp.csr_array((0, b_csr.shape[1]), dtype=np.result_type(a_csr.dtype, b_csr.dtype))
        live = sum(self.is_up(i) for i in range(len(self)))
        bounds = panel_bounds(a_csr.indptr, panels if panels else max(1, live))
        count = len(bounds) - 1
        reports = [
            PanelReport(bounds[p], bounds[p + 1], int(a_csr.indptr[bounds[p + 1]] - a_csr.indptr[bounds[p]]))
            for p in range(count)
        ]
        results: List[Optional[sp.csr_array]] = [None] * count
        b_handles: Dict[int, RemoteMatrix] = {}
        failed: Set[int] = set()
        abort = threading.Event()
        options = pb.MultiplyOptions(algorithm=algorithm, output_type=_wire.output_type_of(dtype), priority=priority)

        def b_on(i: int) -> str:
            s = self._servers[i]
            with s.lock:
                if i not in b_handles:
                    b_handles[i] = s.client.upload(b_csr, "B (panels)", progress=False)
                return b_handles[i].handle

        def forget_b(i: int) -> None:
            with self._servers[i].lock:
                b_handles.pop(i, None)  # the server is gone or lost it: no Delete

        def panel(p: int) -> None:
            rep = reports[p]
            block = a_csr[rep.row_begin : rep.row_end]
            tried: Set[int] = set()
            last: Optional[BaseException] = None
            while not abort.is_set():
                i = self._acquire(tried)
                if i is None:
                    if last is not None:
                        raise last
                    raise Unavailable("no live server in the cluster")
                rep.attempts += 1
                c = self._servers[i].client
                ra: Optional[RemoteMatrix] = None
                try:
                    hb = b_on(i)
                    if before_attempt is not None:
                        before_attempt(p, i, rep.attempts)
                    ra = c.upload(block, "A rows %d:%d" % (rep.row_begin, rep.row_end), progress=False)
                    request = pb.MultiplyRequest(a=ra.handle, b=hb, options=options, output=c._output(False, ""))
                    call = c._rpc.Multiply(request, **c._kw())
                    matrix, _, stats = c._results(call, False, "multiply")
                    if matrix is None:
                        raise ProtocolError("result stream without a header")
                except SpgemmError as e:
                    self._release(i)
                    if not is_failover_error(e):
                        if ra is not None:
                            try:
                                ra.delete()
                            except SpgemmError:
                                pass
                        raise
                    self.mark_down(i)  # and no Delete of ra: the server is gone or lost it
                    forget_b(i)
                    failed.add(i)
                    tried.add(i)
                    last = e
                    continue
                self._release(i)
                try:
                    ra.delete()
                except SpgemmError:
                    pass
                rep.server, rep.stats = i, stats
                results[p] = matrix
                return

        try:
            workers = max(1, min(count, self.max_parallel))
            with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as ex:
                futures = [ex.submit(panel, p) for p in range(count)]
                error: Optional[BaseException] = None
                for f in concurrent.futures.as_completed(futures):
                    e = f.exception()
                    if e is not None and error is None:
                        error = e
                        abort.set()
                if error is not None:
                    raise error
        finally:
            for i, r in list(b_handles.items()):
                if i not in failed:
                    try:
                        r.delete()
                    except SpgemmError:
                        pass
            self.last_panels = reports
            self.last_failed = sorted(failed)

        return _stack(results, bounds, (a_csr.shape[0], b_csr.shape[1]))

    # -- lifetime -----------------------------------------------------------

    def close(self) -> None:
        for s in self._servers:
            s.client.close()

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return "<spgemm.Cluster %s>" % ",".join(self.addresses)


def _canonical(m: Any) -> sp.csr_array:
    """A canonical scipy CSR (sorted, no duplicates, float32/64) sharing the input's arrays where it can."""
    c = _wire.to_csr(m, None)
    out = sp.csr_array((c.data, c.indices, c.indptr), shape=c.shape, copy=False)
    out.has_canonical_format = True
    return out


def _stack(blocks: Sequence[Optional[sp.csr_array]], bounds: Sequence[int], shape: Tuple[int, int]) -> sp.csr_array:
    """The row blocks in order as one CSR, offsets shifted."""
    ms = [m for m in blocks if m is not None]
    if len(ms) != len(blocks):
        raise ProtocolError("a panel has no result")
    for p, m in enumerate(ms):
        if m.shape[0] != bounds[p + 1] - bounds[p]:
            raise ProtocolError("panel %d came back with %d rows instead of %d" % (p, m.shape[0], bounds[p + 1] - bounds[p]))
    dtype = np.result_type(*[m.dtype for m in ms]) if ms else np.float64
    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    pos, shift = 1, 0
    for m in ms:
        r = m.shape[0]
        indptr[pos : pos + r] = m.indptr[1:].astype(np.int64) + shift
        pos += r
        shift += int(m.indptr[-1])
    indices = np.concatenate([m.indices for m in ms]) if ms else np.zeros(0, np.int32)
    data = np.concatenate([m.data.astype(dtype, copy=False) for m in ms]) if ms else np.zeros(0, dtype)
    out = sp.csr_array((data, indices, indptr), shape=shape)
    out.has_sorted_indices = True
    return out
