"""spgemm: the Python client of spgemmd, a GPU sparse matrix-matrix multiplication service.

    >>> import scipy.sparse as sp, spgemm
    >>> with spgemm.Client("localhost:50051") as client:
    ...     C = client.multiply(A)                 # A @ A, local in and out
    ...     with client.upload(A) as R:            # kept on the server
    ...         C3 = (R @ R @ R).fetch()
    ...     T = client.mxm(L, L, "plus_pair", mask=L)  # graph calls: spgemm.graph
    ...     n = spgemm.algorithms.triangle_count(client, A)  # whole graph algorithms

Errors are subclasses of :class:`SpgemmError` (``InvalidArgument``,
``NotFound``, ``ResourceExhausted``, ...), carrying the gRPC status code and
the server's message.
"""

from . import algorithms, errors
from .amg import Hierarchy, Level, SolveInfo
from .client import Client, Operand, RemoteMatrix
from .cluster import Cluster, PanelReport
from .errors import *  # noqa: F401,F403 -- SpgemmError, its subclasses, ERRORS_BY_CODE
from .graph import Transposed, transposed
from .info import DeviceStatus, JobStats, MatrixInfo, ServerStatus, TenantQuotas

__version__: str = "0.1.0"

__all__ = [
    "algorithms",
    "Client",
    "Cluster",
    "PanelReport",
    "RemoteMatrix",
    "Operand",
    "Hierarchy",
    "Level",
    "SolveInfo",
    "Transposed",
    "transposed",
    "MatrixInfo",
    "JobStats",
    "DeviceStatus",
    "ServerStatus",
    "TenantQuotas",
]
# The error classes and ERRORS_BY_CODE, as spgemm.errors lists them
# (from_rpc_error stays in spgemm.errors).
__all__ += errors.__all__
__all__.remove("from_rpc_error")
