"""Graph analytics on the server, with GraphBLAS's names (the service spgemm.v1.Graph).

Products over semirings and masked products::

    C = client.mxm(A, B, semiring="min_plus")                      # shortest paths, one step
    T = client.mxm(L, L, semiring="plus_pair", mask=L)             # triangles: L<L> = L L
    F = client.mxm(F, A, semiring="lor_land", mask=V, complement=True)   # BFS: q<!v> = q A

and the steps between products: :meth:`~GraphCalls.ewise_add`, ``ewise_mult``,
``apply``, ``select``, ``top_k``, ``reduce_rowwise``, ``reduce_columnwise``,
``reduce_scalar``, ``scale_rows``, ``scale_columns``, ``extract_rows``. Every
call takes local (scipy.sparse) or remote operands, and ``transposed(X)`` for
Xᵀ (transposed on the server); it returns the result as a scipy csr_array, or
keeps it on the server (``keep=True``: a RemoteMatrix). A RemoteMatrix has
the same calls as methods (``A.mxm(B, "min_plus")``, ``A.select("tril")``),
whose results stay on the server, so a whole algorithm runs there.

Names are docs/graph.md's: semirings ``monoid_operator`` (plus_times,
min_plus, max_plus, max_min, min_max, lor_land, plus_pair, any_pair,
plus_min, ...), binary operators (first, second, pair, plus, minus, rminus,
times, div, rdiv, min, max, pow, land, lor, lxor, eq, ne, gt, ge, lt, le),
unary ones (identity, abs, ainv, minv, lnot, one, sqrt, exp, log), monoids
(plus, times, min, max, lor, land, lxor, any; ``count`` in reductions) and
selectors (tril, triu, diag, offdiag, valueeq .. valuele, rowle, rowgt,
colle, colgt). Semantics are SuiteSparse:GraphBLAS's for float32/float64;
boolean results are 1.0 or 0.0. A vector is a matrix of one row or column.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Iterator, List, Optional, Sequence, Union

import numpy as np
import scipy.sparse as sp

from . import _wire
from ._rpcs import Rpcs
from .v1 import graph_pb2 as gpb
from .v1 import spgemm_pb2 as pb

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client, RemoteMatrix

__all__ = ["Transposed", "transposed", "GraphCalls", "GraphMethods"]

_AXES = {"rows": gpb.ROWS, "columns": gpb.COLUMNS, "all": gpb.ALL}


class Transposed:
    """An operand taken transposed: the server transposes it for the call."""

    def __init__(self, matrix: Any) -> None:
        self.matrix = matrix

    def __repr__(self) -> str:
        return "transposed(%r)" % (self.matrix,)


def transposed(matrix: Any) -> Transposed:
    """``matrix`` taken transposed by a graph call (GraphBLAS's descriptor T0 / T1)."""
    return Transposed(matrix)


Result = Union[sp.csr_array, "RemoteMatrix"]


class GraphCalls:
    """The Graph service's calls, mixed into :class:`spgemm.Client`."""

    @property
    def _graph(self) -> Any:
        rpcs = getattr(self, "_graph_rpcs", None)
        if rpcs is None:
            rpcs = self._graph_rpcs = Rpcs(self._channel, gpb.DESCRIPTOR.services_by_name["Graph"])
        return rpcs

    @contextlib.contextmanager
    def _operands(self, operands: Sequence[Any], progress: Optional[bool]) -> Iterator[List[gpb.Operand]]:
        """The operands as Operand messages; local ones uploaded for the call."""
        flags = [isinstance(o, Transposed) for o in operands]
        inner = [o.matrix if isinstance(o, Transposed) else o for o in operands]
        with self._handles(inner, progress) as handles:  # type: ignore[attr-defined]
            yield [gpb.Operand(handle=h, transpose=t) for h, t in zip(handles, flags)]

    def _step(self, method: str, request: Any, keep: bool, progress: Optional[bool]) -> Result:
        call = getattr(self._graph, method)(request, **self._kw())  # type: ignore[attr-defined]
        return self._product(call, keep, progress, method)  # type: ignore[attr-defined]

    def _one(self, method: str, a: Any, keep: bool, name: str, progress: Optional[bool], **fields: Any) -> Result:
        with self._operands([a], progress) as (oa,):
            request = getattr(gpb, method + "Request")(a=oa, output=self._output(keep, name), **fields)  # type: ignore[attr-defined]
            return self._step(method, request, keep, progress)

    # -- products -----------------------------------------------------------

    def mxm(
        self,
        a: Any,
        b: Any,
        semiring: str = "plus_times",
        *,
        mask: Any = None,
        complement: bool = False,
        structural: bool = True,
        algorithm: str = "auto",
        dtype: Any = None,
        keep: bool = False,
        name: str = "",
        priority: int = 0,
        progress: Optional[bool] = None,
    ) -> Result:
        """C = A (+).(x) B over ``semiring``; with ``mask``, C<M> (or C<!M> where
        ``complement``): only the entries M allows are computed. ``structural``:
        every entry of M counts (else only those of nonzero value)."""
        options = pb.MultiplyOptions(algorithm=algorithm, output_type=_wire.output_type_of(dtype), priority=priority)
        operands = [a, b] + ([mask] if mask is not None else [])
        with self._operands(operands, progress) as ops:
            request = gpb.MxmRequest(
                a=ops[0], b=ops[1], semiring=semiring, options=options, output=self._output(keep, name)  # type: ignore[attr-defined]
            )
            if mask is not None:
                request.mask.CopyFrom(gpb.Mask(matrix=ops[2], complement=complement, values=not structural))
            return self._step("Mxm", request, keep, progress)

    # -- element-wise -------------------------------------------------------

    def ewise_add(self, a: Any, b: Any, op: str = "plus", *, keep: bool = False, name: str = "",
                  priority: int = 0, progress: Optional[bool] = None) -> Result:
        """A op B on the union of their entries (an entry of one only is copied)."""
        return self._ewise("EwiseAdd", a, b, op, keep, name, priority, progress)

    def ewise_mult(self, a: Any, b: Any, op: str = "times", *, keep: bool = False, name: str = "",
                   priority: int = 0, progress: Optional[bool] = None) -> Result:
        """A op B on the intersection of their entries."""
        return self._ewise("EwiseMult", a, b, op, keep, name, priority, progress)

    def _ewise(self, method: str, a: Any, b: Any, op: str, keep: bool, name: str, priority: int,
               progress: Optional[bool]) -> Result:
        with self._operands([a, b], progress) as (oa, ob):
            request = gpb.EwiseRequest(a=oa, b=ob, op=op, priority=priority, output=self._output(keep, name))  # type: ignore[attr-defined]
            return self._step(method, request, keep, progress)

    def apply(self, a: Any, op: str, scalar: Optional[float] = None, *, scalar_first: bool = False,
              keep: bool = False, name: str = "", priority: int = 0, progress: Optional[bool] = None) -> Result:
        """f(A) for a unary operator; with ``scalar``, a_ij op scalar (scalar op a_ij where
        ``scalar_first``): ``apply(A, "pow", 2)`` squares every entry."""
        fields: dict = {"op": op, "priority": priority, "scalar_first": scalar_first}
        if scalar is not None:
            fields["scalar"] = float(scalar)
        return self._one("Apply", a, keep, name, progress, **fields)

    def select(self, a: Any, selector: str, thunk: float = 0, *, keep: bool = False, name: str = "",
               priority: int = 0, progress: Optional[bool] = None) -> Result:
        """The entries ``selector`` keeps: tril / triu / diag / offdiag with offset ``thunk``,
        valuegt .. valuele against ``thunk``, rowle / rowgt / colle / colgt."""
        return self._one("Select", a, keep, name, progress, selector=selector, thunk=float(thunk), priority=priority)

    def top_k(self, a: Any, k: int, *, columns: bool = False, keep: bool = False, name: str = "",
              priority: int = 0, progress: Optional[bool] = None) -> Result:
        """The k largest entries of each row (each column where ``columns``), in place."""
        return self._one("TopK", a, keep, name, progress, k=int(k), columns=columns, priority=priority)

    # -- reductions ---------------------------------------------------------

    def _reduce(self, a: Any, axis: str, monoid: str, keep: bool, name: str, priority: int,
                progress: Optional[bool]) -> Result:
        return self._one("Reduce", a, keep, name, progress, axis=_AXES[axis], monoid=monoid, priority=priority)

    def reduce_rowwise(self, a: Any, monoid: str = "plus", *, keep: bool = False, name: str = "",
                       priority: int = 0, progress: Optional[bool] = None) -> Result:
        """Each row reduced by ``monoid`` (or "count"): a rows x 1 matrix, an entry per non-empty row."""
        return self._reduce(a, "rows", monoid, keep, name, priority, progress)

    def reduce_columnwise(self, a: Any, monoid: str = "plus", *, keep: bool = False, name: str = "",
                          priority: int = 0, progress: Optional[bool] = None) -> Result:
        """Each column reduced: a 1 x cols matrix, an entry per non-empty column."""
        return self._reduce(a, "columns", monoid, keep, name, priority, progress)

    def reduce_scalar(self, a: Any, monoid: str = "plus", *, keep: bool = False, name: str = "",
                      priority: int = 0, progress: Optional[bool] = None) -> Union[Optional[float], "RemoteMatrix"]:
        """Every entry reduced: a float (None where A has no entries), or with ``keep`` a 1 x 1 RemoteMatrix."""
        r = self._reduce(a, "all", monoid, keep, name, priority, progress)
        if keep:
            return r
        return float(r.data[0]) if r.nnz else None

    # -- scaling, extraction ------------------------------------------------

    def scale_rows(self, a: Any, v: Any, op: str = "times", *, keep: bool = False, name: str = "",
                   priority: int = 0, progress: Optional[bool] = None) -> Result:
        """diag(v) A: a_ij op v_i; rows whose element of v is absent go. v: n x 1 or 1 x n."""
        return self._scale(a, v, False, op, keep, name, priority, progress)

    def scale_columns(self, a: Any, v: Any, op: str = "times", *, keep: bool = False, name: str = "",
                      priority: int = 0, progress: Optional[bool] = None) -> Result:
        """A diag(v): a_ij op v_j (``op="div"`` with the column sums normalizes the columns)."""
        return self._scale(a, v, True, op, keep, name, priority, progress)

    def _scale(self, a: Any, v: Any, columns: bool, op: str, keep: bool, name: str, priority: int,
               progress: Optional[bool]) -> Result:
        with self._operands([a, v], progress) as (oa, ov):
            request = gpb.ScaleRequest(
                a=oa, v=ov, columns=columns, op=op, priority=priority, output=self._output(keep, name)  # type: ignore[attr-defined]
            )
            return self._step("Scale", request, keep, progress)

    def extract_rows(self, a: Any, rows: Sequence[int], *, keep: bool = False, name: str = "",
                     priority: int = 0, progress: Optional[bool] = None) -> Result:
        """Rows ``rows`` of A in that order (repeats allowed)."""
        return self._one("ExtractRows", a, keep, name, progress, rows=[int(r) for r in np.asarray(rows).ravel()],
                         priority=priority)


class GraphMethods:
    """The graph calls as methods of :class:`spgemm.RemoteMatrix`; results stay on the server."""

    client: "Client"

    def mxm(self, other: Any, semiring: str = "plus_times", **kw: Any) -> "RemoteMatrix":
        """self (+).(x) other (mask=, complement=, structural= as :meth:`GraphCalls.mxm`)."""
        return self.client.mxm(self, other, semiring, keep=True, **kw)

    def ewise_add(self, other: Any, op: str = "plus", **kw: Any) -> "RemoteMatrix":
        return self.client.ewise_add(self, other, op, keep=True, **kw)

    def ewise_mult(self, other: Any, op: str = "times", **kw: Any) -> "RemoteMatrix":
        return self.client.ewise_mult(self, other, op, keep=True, **kw)

    def apply(self, op: str, scalar: Optional[float] = None, **kw: Any) -> "RemoteMatrix":
        return self.client.apply(self, op, scalar, keep=True, **kw)

    def select(self, selector: str, thunk: float = 0, **kw: Any) -> "RemoteMatrix":
        return self.client.select(self, selector, thunk, keep=True, **kw)

    def top_k(self, k: int, **kw: Any) -> "RemoteMatrix":
        return self.client.top_k(self, k, keep=True, **kw)

    def reduce_rowwise(self, monoid: str = "plus", **kw: Any) -> "RemoteMatrix":
        return self.client.reduce_rowwise(self, monoid, keep=True, **kw)

    def reduce_columnwise(self, monoid: str = "plus", **kw: Any) -> "RemoteMatrix":
        return self.client.reduce_columnwise(self, monoid, keep=True, **kw)

    def reduce_scalar(self, monoid: str = "plus", **kw: Any) -> Optional[float]:
        """The reduction of every entry, as a float (None where there are none)."""
        return self.client.reduce_scalar(self, monoid, **kw)  # type: ignore[return-value]

    def scale_rows(self, v: Any, op: str = "times", **kw: Any) -> "RemoteMatrix":
        return self.client.scale_rows(self, v, op, keep=True, **kw)

    def scale_columns(self, v: Any, op: str = "times", **kw: Any) -> "RemoteMatrix":
        return self.client.scale_columns(self, v, op, keep=True, **kw)

    def extract_rows(self, rows: Sequence[int], **kw: Any) -> "RemoteMatrix":
        return self.client.extract_rows(self, rows, keep=True, **kw)
