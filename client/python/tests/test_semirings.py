"""Products over semirings and masked products through the server (Client.mxm) against
python-graphblas (SuiteSparse:GraphBLAS) on random, structured and shared matrices."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm
from conftest import load_matrix
from graph_oracle import assert_same, from_gb, gb, semiring, to_gb

SEMIRINGS = ["plus_times", "min_plus", "max_plus", "max_min", "min_max", "lor_land", "plus_pair", "any_pair",
             "plus_min", "min_first", "max_second", "plus_minus", "land_gt"]
# Sums of floating products whose order may differ from GraphBLAS's: compared within rounding.
ROUNDING = {"plus_times", "plus_min", "plus_minus"}
SHARED = ["hep-th", "rajat01", "cryg2500", "ca-CondMat"]


def small_integers(m: sp.sparray, seed: int) -> sp.csr_array:
    """m's structure with values in -3 .. 5 (ties and zeros for min, max and the logical operators)."""
    m = sp.csr_array(m, dtype=np.float64)
    m.data = np.random.default_rng(seed).integers(-3, 6, m.nnz).astype(np.float64)
    return m


def random(rows: int, cols: int, density: float, seed: int) -> sp.csr_array:
    return small_integers(sp.random(rows, cols, density=density, format="csr", random_state=seed), seed)


def grid(n: int) -> sp.csr_array:
    """The 5-point Laplacian of an n x n grid."""
    one = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    return sp.csr_array(sp.kron(sp.identity(n), one) + sp.kron(one, sp.identity(n)))


def operand_pairs():
    yield "random 80x60 * 60x70", random(80, 60, 0.08, 1), random(60, 70, 0.08, 2)
    yield "random with empty rows, 1 x 1", random(1, 1, 1.0, 3), random(1, 1, 1.0, 4)
    yield "grid 12x12 squared", small_integers(grid(12), 5), small_integers(grid(12), 6)
    yield "empty", sp.csr_array((5, 4)), random(4, 6, 0.5, 7)


def reference(a, b, name, mask=None, complement=False, structural=True):
    expr = to_gb(a).mxm(to_gb(b), semiring(name))
    if mask is None:
        return from_gb(expr.new())
    m = to_gb(mask)
    m = m.S if structural else m.V
    c = gb.Matrix(float, a.shape[0], b.shape[1])
    c(mask=~m if complement else m) << expr
    return from_gb(c)


@pytest.mark.parametrize("name", SEMIRINGS)
def test_semirings_match_graphblas(client: spgemm.Client, name: str) -> None:
    for what, a, b in operand_pairs():
        c = client.mxm(a, b, name)
        assert_same(c, reference(a, b, name), 1e-12 if name in ROUNDING else None), what


@pytest.mark.parametrize("matrix", SHARED)
def test_semirings_on_shared_matrices(client: spgemm.Client, matrix: str) -> None:
    a = small_integers(load_matrix(matrix), 11)
    with client.upload(a) as ra:
        for name in ["plus_times", "min_plus", "lor_land", "plus_pair", "max_min"]:
            c = client.mxm(ra, ra, name)
            assert_same(c, reference(a, a, name), 1e-12 if name in ROUNDING else None)


@pytest.mark.parametrize("complement", [False, True])
@pytest.mark.parametrize("structural", [True, False])
def test_masked_products_match_graphblas(client: spgemm.Client, complement: bool, structural: bool) -> None:
    a, b = random(120, 90, 0.06, 21), random(90, 100, 0.06, 22)
    # Half the product's entries and others beside, zeros among the mask's values.
    full = sp.csr_array(a @ b)
    mask = small_integers(sp.csr_array(full.multiply(random(120, 100, 0.5, 23) != 0) + random(120, 100, 0.05, 24)), 25)
    for name in ["plus_times", "plus_pair", "min_plus", "lor_land", "any_pair"]:
        c = client.mxm(a, b, name, mask=mask, complement=complement, structural=structural)
        ref = reference(a, b, name, mask, complement, structural)
        assert_same(c, ref, 1e-12 if name in ROUNDING else None)


def test_transposed_operands_and_kept_results(client: spgemm.Client) -> None:
    a, bt = random(50, 40, 0.1, 31), random(60, 40, 0.1, 32)
    with client.upload(a) as ra, client.upload(bt) as rbt:
        with ra.mxm(spgemm.transposed(rbt), "min_plus") as kept:
            assert kept.shape == (50, 60)
            assert_same(kept.fetch(), reference(a, bt.T, "min_plus"))


def test_names_and_shapes_the_server_refuses(client: spgemm.Client) -> None:
    a = random(10, 8, 0.3, 41)
    for bad in ["minplus", "min_foo", "lor_plus"]:
        with pytest.raises(spgemm.InvalidArgument):
            client.mxm(a, a.T, bad)
    with pytest.raises(spgemm.InvalidArgument):
        client.mxm(a, a)  # 10 x 8 times 10 x 8
    with pytest.raises(spgemm.InvalidArgument):
        client.mxm(a, a.T, mask=random(10, 9, 0.3, 42))
    with pytest.raises(spgemm.InvalidArgument):
        client.mxm(a, a.T, "min_plus", algorithm="rmerge")
