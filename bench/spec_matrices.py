"""Operands for the Python end-to-end scripts of bench/results: a Matrix Market file, or a spec
generated in scipy: `stencil7:N` / `stencil27:N` (3D Poisson on N^3 points, faces or the whole cube),
`er:N:K` (N rows of K uniform random columns, seed 1)."""
import numpy as np
import scipy.io
import scipy.sparse as sp


def stencil(n, points):
    """A 3D Poisson stencil on n^3 points: 7 (faces) or 27 (the whole cube)."""
    one = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr")
    eye = sp.identity(n, format="csr")
    if points == 27:
        return sp.csr_matrix(sp.kron(sp.kron(one, one), one))
    lap = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n), format="csr")
    return sp.csr_matrix(sp.kron(sp.kron(lap, eye), eye) + sp.kron(sp.kron(eye, lap), eye) + sp.kron(sp.kron(eye, eye), lap))


def load(spec):
    if spec.startswith("stencil"):
        points, n = spec[len("stencil"):].split(":")
        return spec, stencil(int(n), int(points))
    if spec.startswith("er:"):
        _, n, k = spec.split(":")
        n, k = int(n), int(k)
        rng = np.random.default_rng(1)
        cols = rng.integers(0, n, size=n * k)
        a = sp.csr_matrix((rng.uniform(-1, 1, n * k), cols, np.arange(0, n * k + 1, k)), shape=(n, n))
        a.sum_duplicates()
        return spec, a
    return spec.split("/")[-1].split(".")[0], sp.csr_matrix(scipy.io.mmread(spec), dtype=np.float64)
