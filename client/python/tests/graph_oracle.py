"""python-graphblas (SuiteSparse:GraphBLAS) as the oracle of the graph tests: names
translated, matrices converted both ways, results compared."""

from __future__ import annotations

from typing import Optional

import numpy as np
import pytest
import scipy.sparse as sp

gb = pytest.importorskip("graphblas", reason="python-graphblas is the oracle (pip install python-graphblas)")

# Our names where python-graphblas names the FP operator otherwise (GraphBLAS's
# DIV on floats is truediv; the comparisons that give 1.0 / 0.0 are is*).
_BINARY = {"div": "truediv", "rdiv": "rtruediv", "eq": "iseq", "ne": "isne", "gt": "isgt", "ge": "isge",
           "lt": "islt", "le": "isle"}


def binary(name: str):
    return getattr(gb.binary, _BINARY.get(name, name))


def semiring(name: str):
    """A semiring over FP64 (a comparison gives BOOL there: compared as 1.0 / 0.0)."""
    monoid, _, op = name.partition("_")
    op = {"div": "truediv", "rdiv": "rtruediv"}.get(op, op)
    return getattr(gb.semiring, monoid + "_" + op)[float]


def to_gb(a: sp.sparray):
    return gb.io.from_scipy_sparse(sp.csr_array(a, dtype=np.float64))


def from_gb(m) -> sp.csr_array:
    c = gb.io.to_scipy_sparse(m, format="csr").astype(np.float64)
    c.sort_indices()
    return sp.csr_array(c)


def vector_as(v, shape) -> sp.csr_array:
    """A GraphBLAS Vector as a matrix of `shape` (n x 1 or 1 x n)."""
    idx, vals = v.to_coo()
    idx = idx.astype(np.int64)
    vals = vals.astype(np.float64)
    if shape[1] == 1:
        return sp.csr_array((vals, (idx, np.zeros_like(idx))), shape=shape)
    return sp.csr_array((vals, (np.zeros_like(idx), idx)), shape=shape)


def assert_same(c: sp.sparray, ref: sp.sparray, rtol: Optional[float] = None) -> None:
    """Same entries (explicit zeros count) and values: equal, or within rtol of the largest |ref|
    of the row where sums may be taken in another order."""
    c = sp.csr_array(c, dtype=np.float64)
    ref = sp.csr_array(ref, dtype=np.float64)
    c.sort_indices()
    ref.sort_indices()
    assert c.shape == ref.shape
    np.testing.assert_array_equal(c.indptr, ref.indptr, err_msg="row lengths differ")
    np.testing.assert_array_equal(c.indices, ref.indices, err_msg="columns differ")
    if rtol is None:
        np.testing.assert_array_equal(c.data, ref.data)
    else:
        np.testing.assert_allclose(c.data, ref.data, rtol=rtol, atol=rtol * (1 + np.abs(ref.data).max(initial=0)))
