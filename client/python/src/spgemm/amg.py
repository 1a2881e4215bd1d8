"""Algebraic multigrid on the server: :class:`Hierarchy` (spgemm.v1.Amg).

    >>> with spgemm.Client() as client:
    ...     h = client.amg(A)                                   # set up on the server's device
    ...     x, info = h.solve(b, tol=1e-8)                      # CG preconditioned by V-cycles
    ...     x, code = scipy.sparse.linalg.cg(A, b, M=h.aslinearoperator())
    ...     h.resetup(new_values)                               # same pattern: numeric only
    ...     h.delete()

The hierarchy's levels are matrices stored on the server (``h.levels[k].a``,
``.p``, ``.r``: handles that :meth:`Client.download` or products accept).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Tuple

import grpc
import numpy as np
import scipy.sparse.linalg as spla

from .errors import SpgemmError, from_rpc_error
from .v1 import amg_pb2 as apb

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client, RemoteMatrix

__all__ = ["Hierarchy", "Level", "SolveInfo"]

#: Values a vector chunk carries: 1 MiB, well under gRPC's 4 MiB messages.
_CHUNK_VALUES = (1 << 20) // 8


@dataclass(frozen=True)
class Level:
    """One level of a hierarchy: its matrix A (and P, R = P^T above the coarsest), as handles."""

    rows: int
    nnz: int
    block_size: int  #: unknowns per node
    a: str
    p: str  #: "" on the coarsest level
    r: str


@dataclass(frozen=True)
class SolveInfo:
    """What a solve reports."""

    iterations: int
    residuals: List[float]  #: ||b - A x|| / ||b|| before the first iteration and after each
    converged: bool
    solve_ms: float  #: on the server's device
    call_ms: float  #: the call, request to last chunk, on the server
    device: str


def _vector_chunks(v: np.ndarray) -> Iterator[Tuple[int, bytes]]:
    for first in range(0, len(v), _CHUNK_VALUES):
        yield first, v[first : first + _CHUNK_VALUES].astype("<f8", copy=False).tobytes()


class Hierarchy:
    """A smoothed-aggregation hierarchy kept on the server (docs/amg.md).

    Attributes: ``handle``; ``levels`` (:class:`Level`); ``operator_complexity``
    and ``grid_complexity``; ``setup_ms``, the last setup's milliseconds by phase
    (strength, aggregation, tentative, spectral_radius, smoothing, transpose,
    galerkin, coarse_solver, total, queue, call); ``numeric_only`` (the last
    setup was a re-setup); ``device``; ``methods`` (the products' methods).
    Use it as a context manager to delete it on exit.
    """

    def __init__(self, client: "Client", message: Any, owned: Optional["RemoteMatrix"] = None) -> None:
        self.client = client
        self.deleted = False
        #: The matrix the client uploaded for the hierarchy, deleted with it.
        self._owned = owned
        self._update(message)

    def _update(self, m: Any) -> None:
        self.handle: str = m.handle
        self.levels: List[Level] = [
            Level(int(l.rows), int(l.nnz), int(l.block_size), l.a, l.p, l.r) for l in m.levels
        ]
        self.operator_complexity: float = m.operator_complexity
        self.grid_complexity: float = m.grid_complexity
        t = m.setup
        self.setup_ms: Dict[str, float] = {
            name: getattr(t, name + "_ms")
            for name in ("strength", "aggregation", "tentative", "spectral_radius", "smoothing", "transpose",
                         "galerkin", "coarse_solver", "total", "queue", "call")
        }
        self.numeric_only: bool = m.numeric_only
        self.device: str = m.device
        self.methods: str = m.methods
        self.mis_rounds: int = int(m.mis_rounds)
        self.bytes: int = int(m.bytes)

    @property
    def shape(self) -> Tuple[int, int]:
        n = self.levels[0].rows
        return (n, n)

    # -- setup --------------------------------------------------------------

    def resetup(self, values: Any = None) -> "Hierarchy":
        """Sets the hierarchy up again with new values of its matrix, same pattern (numeric only).

        ``values``: the matrix's new values (a scipy.sparse matrix of the same
        pattern, or its values in CSR order), written first; ``None``: the values
        the server holds now (after :meth:`Client.update_values`).
        """
        if values is not None:
            self.client.update_values(self.levels[0].a, values)
        self._update(self.client._amg_unary("Resetup", apb.AmgHierarchyRequest(hierarchy=self.handle)))
        return self

    # -- solve --------------------------------------------------------------

    def _call_solve(self, b: Any, x0: Any, options: apb.AmgSolveOptions) -> Tuple[np.ndarray, Any]:
        b = np.ascontiguousarray(np.asarray(b, dtype=np.float64).ravel())
        n = self.shape[0]
        if b.shape[0] != n:
            raise ValueError("spgemm: b has %d values; the hierarchy's matrix %d rows" % (b.shape[0], n))
        x0v = None if x0 is None else np.ascontiguousarray(np.asarray(x0, dtype=np.float64).ravel())

        def parts() -> Iterator[apb.AmgSolvePart]:
            yield apb.AmgSolvePart(header=apb.AmgSolveHeader(
                hierarchy=self.handle, options=options, rows=n, initial_guess=x0v is not None))
            for first, data in _vector_chunks(b):
                yield apb.AmgSolvePart(b=apb.VectorChunk(first=first, values=data))
            if x0v is not None:
                for first, data in _vector_chunks(x0v):
                    yield apb.AmgSolvePart(x0=apb.VectorChunk(first=first, values=data))

        x = np.empty(n, dtype=np.float64)
        stats = None
        call = self.client._amg_rpc.Solve(parts(), **self.client._kw())
        try:
            for reply in call:
                if reply.HasField("x"):
                    c = reply.x
                    values = np.frombuffer(c.values, dtype="<f8")
                    x[c.first : c.first + len(values)] = values
                else:
                    stats = reply.stats
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        except BaseException:
            call.cancel()
            raise
        return x, stats

    def solve(
        self,
        b: Any,
        x0: Any = None,
        *,
        tol: float = 1e-8,
        maxiter: int = 500,
        smoother: str = "chebyshev",
        chebyshev_degree: int = 3,
        jacobi_omega: float = 1.0,
        presweeps: int = 1,
        postsweeps: int = 1,
        cg: bool = True,
    ) -> Tuple[np.ndarray, SolveInfo]:
        """x with ||b - A x|| <= tol ||b|| by CG preconditioned with V-cycles (``cg=False``: V-cycles alone)."""
        options = apb.AmgSolveOptions(
            tolerance=tol, max_iterations=maxiter, stationary=not cg, smoother=smoother,
            chebyshev_degree=chebyshev_degree, jacobi_omega=jacobi_omega, presweeps=presweeps,
            postsweeps=postsweeps)
        x, s = self._call_solve(b, x0, options)
        info = SolveInfo(int(s.iterations), list(s.residuals), bool(s.converged), s.solve_ms, s.call_ms, s.device)
        return x, info

    def precondition(self, r: Any, *, smoother: str = "chebyshev", chebyshev_degree: int = 3,
                     jacobi_omega: float = 1.0, presweeps: int = 1, postsweeps: int = 1) -> np.ndarray:
        """z = M^-1 r: one V-cycle from zero on the server."""
        options = apb.AmgSolveOptions(one_cycle=True, smoother=smoother, chebyshev_degree=chebyshev_degree,
                                      jacobi_omega=jacobi_omega, presweeps=presweeps, postsweeps=postsweeps)
        return self._call_solve(r, None, options)[0]

    def aslinearoperator(self, **cycle: Any) -> spla.LinearOperator:
        """The V-cycle as a scipy LinearOperator: ``M`` for scipy.sparse.linalg.cg and friends.

        Each application is one call to the server (``cycle``: as :meth:`precondition`).
        """
        n = self.shape[0]
        return spla.LinearOperator((n, n), matvec=lambda r: self.precondition(r, **cycle), dtype=np.float64)

    # -- lifetime -----------------------------------------------------------

    def delete(self) -> None:
        """Deletes the hierarchy and its levels' matrices (and the matrix uploaded for it)."""
        if self.deleted:
            return
        self.client._amg_unary("Delete", apb.AmgHierarchyRequest(hierarchy=self.handle))
        self.deleted = True
        if self._owned is not None:
            self._owned.delete()

    def __enter__(self) -> "Hierarchy":
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.delete()
        except SpgemmError:
            if exc[0] is None:
                raise

    def __repr__(self) -> str:
        return "Hierarchy(%s, %d levels, rows %s, operator complexity %.3f, %s)" % (
            self.handle, len(self.levels), [l.rows for l in self.levels], self.operator_complexity, self.device)
