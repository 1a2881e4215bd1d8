"""The steps between products through the server (Client.ewise_add, apply, select, top_k,
reduce_*, scale_*, extract_rows) against python-graphblas (and numpy where GraphBLAS has
no such op), with local, remote and transposed operands."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm
from conftest import load_matrix
from graph_oracle import assert_same, binary, from_gb, gb, to_gb, vector_as
from test_semirings import random, small_integers


@pytest.fixture(scope="module")
def pair():
    return random(70, 50, 0.1, 1), random(70, 50, 0.1, 2)


@pytest.mark.parametrize("op", ["plus", "min", "minus", "times", "first", "second", "gt", "div"])
def test_element_wise(client: spgemm.Client, pair, op: str) -> None:
    a, b = pair
    b = sp.csr_array(b + sp.csr_array((np.full(b.nnz, 0.5), b.indices, b.indptr), shape=b.shape))  # no zero divisors
    assert_same(client.ewise_add(a, b, op), from_gb(to_gb(a).ewise_add(to_gb(b), binary(op)).new()))
    assert_same(client.ewise_mult(a, b, op), from_gb(to_gb(a).ewise_mult(to_gb(b), binary(op)).new()))


@pytest.mark.parametrize("op", ["identity", "abs", "ainv", "minv", "one", "lnot", "sqrt", "exp", "log"])
def test_apply_unary(client: spgemm.Client, pair, op: str) -> None:
    a, _ = pair
    with np.errstate(all="ignore"):
        ref = from_gb(to_gb(a).apply(getattr(gb.unary, op)[float]).new())
    c = client.apply(a, op)
    np.testing.assert_array_equal(c.indptr, ref.indptr)
    np.testing.assert_allclose(c.data, ref.data, rtol=1e-15, equal_nan=True)


def test_apply_with_a_bound_scalar(client: spgemm.Client, pair) -> None:
    a, _ = pair
    assert_same(client.apply(a, "pow", 2), from_gb(to_gb(a).apply(gb.binary.pow, right=2.0).new()))
    assert_same(client.apply(a, "minus", 1.5, scalar_first=True),
                from_gb(to_gb(a).apply(gb.binary.minus, left=1.5).new()))
    assert_same(client.apply(a, "max", 0), from_gb(to_gb(a).apply(gb.binary.max, right=0.0).new()))


@pytest.mark.parametrize("selector, thunk", [("tril", 0), ("tril", -1), ("triu", 1), ("diag", 0), ("offdiag", 0),
                                             ("valuegt", 0), ("valuege", 1), ("valueeq", 0), ("valuene", 0),
                                             ("valuelt", 2), ("valuele", -1), ("rowle", 30), ("rowgt", 30),
                                             ("colle", 10), ("colgt", 10)])
def test_select(client: spgemm.Client, pair, selector: str, thunk: float) -> None:
    a, _ = pair
    assert_same(client.select(a, selector, thunk), from_gb(to_gb(a).select(selector, thunk).new()))


@pytest.mark.parametrize("monoid", ["plus", "min", "max", "times", "count"])
def test_reductions(client: spgemm.Client, pair, monoid: str) -> None:
    a, _ = pair
    g = to_gb(a)
    how = gb.agg.count if monoid == "count" else getattr(gb.monoid, monoid)
    assert_same(client.reduce_rowwise(a, monoid), vector_as(g.reduce_rowwise(how).new(), (70, 1)))
    assert_same(client.reduce_columnwise(a, monoid), vector_as(g.reduce_columnwise(how).new(), (1, 50)))
    want = g.reduce_scalar(how).new().value
    got = client.reduce_scalar(a, monoid)
    assert got == pytest.approx(float(want), rel=1e-12)
    assert client.reduce_scalar(sp.csr_array((3, 4)), monoid) is None


def test_scale_by_a_vector_of_either_orientation(client: spgemm.Client, pair) -> None:
    a, _ = pair
    v = sp.csr_array(sp.random(1, 50, density=0.7, format="csr", random_state=5)) + 0.0
    ref = from_gb(to_gb(a).mxm(gb.Vector.from_coo(v.indices, v.data, size=50).diag(), gb.semiring.any_truediv).new())
    assert_same(client.scale_columns(a, v, "div"), ref)
    assert_same(client.scale_columns(a, v.T, "div"), ref)
    rows = sp.csr_array(np.arange(1.0, 71.0).reshape(70, 1))
    d = gb.Vector.from_coo(np.arange(70), np.arange(1.0, 71.0), size=70).diag()
    assert_same(client.scale_rows(a, rows), from_gb(d.mxm(to_gb(a), gb.semiring.any_times).new()))
    with pytest.raises(spgemm.InvalidArgument):
        client.scale_rows(a, v)


def test_top_k_per_row_and_column(client: spgemm.Client, pair) -> None:
    a, _ = pair

    def top(m: sp.csr_array, k: int) -> sp.csr_array:
        out = m.copy()
        for r in range(m.shape[0]):
            lo, hi = m.indptr[r], m.indptr[r + 1]
            order = np.argsort(-m.data[lo:hi], kind="stable")  # larger first, then the smaller column
            drop = order[k:]
            out.data[lo + drop] = np.nan
        keep = ~np.isnan(out.data)
        coo = out.tocoo()
        return sp.csr_array((coo.data[keep], (coo.row[keep], coo.col[keep])), shape=m.shape)

    for k in [0, 1, 3]:
        assert_same(client.top_k(a, k), top(a, k))
        assert_same(client.top_k(a, k, columns=True), sp.csr_array(top(sp.csr_array(a.T), k).T))


def test_extract_rows_and_transposed_views(client: spgemm.Client, pair) -> None:
    a, b = pair
    rows = [5, 0, 5, 69]
    assert_same(client.extract_rows(a, rows), from_gb(to_gb(a)[rows, :].new()))
    with client.upload(a) as ra, client.upload(b) as rb:
        assert_same(client.ewise_add(ra, rb), from_gb(to_gb(a).ewise_add(to_gb(b)).new()))
        assert_same(client.reduce_rowwise(spgemm.transposed(ra)), vector_as(to_gb(a).T.reduce_rowwise().new(), (50, 1)))
        with ra.select("tril").ewise_mult(ra, "plus") as kept:
            assert_same(kept.fetch(), from_gb(to_gb(a).select("tril").new().ewise_mult(to_gb(a), gb.binary.plus).new()))


def test_steps_on_a_shared_graph(client: spgemm.Client) -> None:
    a = small_integers(load_matrix("ca-CondMat"), 3)
    g = to_gb(a)
    with client.upload(a) as ra:
        assert_same(ra.select("valuege", 1).fetch(), from_gb(g.select("valuege", 1).new()))
        assert_same(ra.reduce_columnwise("max").fetch(), vector_as(g.reduce_columnwise(gb.monoid.max).new(), (1, a.shape[1])))
        assert_same(ra.apply("pow", 2).fetch(), from_gb(g.apply(gb.binary.pow, right=2.0).new()))


def test_unknown_names(client: spgemm.Client, pair) -> None:
    a, b = pair
    for call in [lambda: client.select(a, "lower"), lambda: client.apply(a, "square"),
                 lambda: client.ewise_add(a, b, "sum"), lambda: client.reduce_rowwise(a, "sum"),
                 lambda: client.top_k(a, -1)]:
        with pytest.raises(spgemm.InvalidArgument):
            call()
