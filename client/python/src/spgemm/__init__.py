"""spgemm: the Python client of spgemmd, a GPU sparse matrix-matrix multiplication service.

    >>> import scipy.sparse as sp, spgemm
    >>> with spgemm.Client("localhost:50051") as client:
    ...     C = client.multiply(A)                 # A @ A, local in and out
    ...     with client.upload(A) as R:            # kept on the server
    ...         C3 = (R @ R @ R).fetch()

Errors are subclasses of :class:`SpgemmError` (``InvalidArgument``,
``NotFound``, ``ResourceExhausted``, ...), carrying the gRPC status code and
the server's message.
"""

from .client import Client, Operand, RemoteMatrix
from .cluster import Cluster, PanelReport
from .errors import (
    ERRORS_BY_CODE,
    Aborted,
    AlreadyExists,
    Cancelled,
    DataLoss,
    DeadlineExceeded,
    FailedPrecondition,
    Internal,
    InvalidArgument,
    NotFound,
    OutOfRange,
    PermissionDenied,
    ProtocolError,
    ResourceExhausted,
    SpgemmError,
    Unauthenticated,
    Unavailable,
    Unimplemented,
    Unknown,
)
from .info import DeviceStatus, JobStats, MatrixInfo, ServerStatus

__version__: str = "0.1.0"

__all__ = [
    "Client",
    "Cluster",
    "PanelReport",
    "RemoteMatrix",
    "Operand",
    "MatrixInfo",
    "JobStats",
    "DeviceStatus",
    "ServerStatus",
    "SpgemmError",
    "Cancelled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
    "ProtocolError",
    "ERRORS_BY_CODE",
]
