"""Exceptions raised by the spgemm client.

Every failed RPC becomes an instance of a subclass of :class:`SpgemmError`
carrying the gRPC status code and the server's message. The mapping from
status codes to classes lives in one place, :data:`ERRORS_BY_CODE`, and is
applied by :func:`from_rpc_error`.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type

import grpc

__all__ = [
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
    "from_rpc_error",
]


#: The one place where gRPC status codes map to exception classes: every
#: subclass that names a ``code`` registers itself here.
ERRORS_BY_CODE: Dict[grpc.StatusCode, Type["SpgemmError"]] = {}


class SpgemmError(Exception):
    """Base class of every error the client raises for a failed call.

    Attributes:
        code: the gRPC status code (``None`` for :class:`ProtocolError`).
        details: the server's message, verbatim.
    """

    code: Optional[grpc.StatusCode] = None

    def __init_subclass__(cls, code: Optional[grpc.StatusCode] = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code
            ERRORS_BY_CODE[code] = cls

    def __init__(self, details: str, code: Optional[grpc.StatusCode] = None) -> None:
        if code is not None:
            self.code = code
        self.details: str = details
        name = self.code.name if self.code is not None else "PROTOCOL"
        super().__init__("%s: %s" % (name, details))


class Cancelled(SpgemmError, code=grpc.StatusCode.CANCELLED):
    """The call was cancelled (CANCELLED); the server stopped the job."""


class Unknown(SpgemmError, code=grpc.StatusCode.UNKNOWN):
    """An error the server could not classify (UNKNOWN)."""


class InvalidArgument(SpgemmError, ValueError, code=grpc.StatusCode.INVALID_ARGUMENT):
    """Malformed CSR, mismatched shapes, a bad header or algorithm name (INVALID_ARGUMENT)."""


class DeadlineExceeded(SpgemmError, TimeoutError, code=grpc.StatusCode.DEADLINE_EXCEEDED):
    """The call's deadline passed (DEADLINE_EXCEEDED); the server stopped the job."""


class NotFound(SpgemmError, KeyError, code=grpc.StatusCode.NOT_FOUND):
    """An unknown, expired or deleted handle (NOT_FOUND)."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return Exception.__str__(self)


class AlreadyExists(SpgemmError, code=grpc.StatusCode.ALREADY_EXISTS):
    """ALREADY_EXISTS."""


class PermissionDenied(SpgemmError, code=grpc.StatusCode.PERMISSION_DENIED):
    """The caller may not touch this resource (PERMISSION_DENIED)."""


class ResourceExhausted(SpgemmError, MemoryError, code=grpc.StatusCode.RESOURCE_EXHAUSTED):
    """A job or matrix that can never fit the server's budget, a full queue, or a quota of the
    caller's tenant (the message names it) (RESOURCE_EXHAUSTED)."""


class FailedPrecondition(SpgemmError, code=grpc.StatusCode.FAILED_PRECONDITION):
    """FAILED_PRECONDITION."""


class Aborted(SpgemmError, code=grpc.StatusCode.ABORTED):
    """ABORTED."""


class OutOfRange(SpgemmError, code=grpc.StatusCode.OUT_OF_RANGE):
    """OUT_OF_RANGE."""


class Unimplemented(SpgemmError, code=grpc.StatusCode.UNIMPLEMENTED):
    """The server does not implement this call (UNIMPLEMENTED)."""


class Internal(SpgemmError, code=grpc.StatusCode.INTERNAL):
    """A server-side failure, e.g. of a device (INTERNAL); the server stays up."""


class Unavailable(SpgemmError, ConnectionError, code=grpc.StatusCode.UNAVAILABLE):
    """The server cannot be reached or is shutting down (UNAVAILABLE)."""


class DataLoss(SpgemmError, code=grpc.StatusCode.DATA_LOSS):
    """DATA_LOSS."""


class Unauthenticated(SpgemmError, code=grpc.StatusCode.UNAUTHENTICATED):
    """Missing or bad credentials (UNAUTHENTICATED)."""


class ProtocolError(SpgemmError):
    """The server's reply broke the wire contract (e.g. chunks out of order); a client or server bug."""


def from_rpc_error(error: grpc.RpcError) -> SpgemmError:
    """The :class:`SpgemmError` subclass instance for a failed gRPC call.

    Args:
        error: the exception grpcio raised (a ``grpc.Call`` as well for unary
            and streaming calls).
    """
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = error.details() if hasattr(error, "details") else str(error)
    cls = ERRORS_BY_CODE.get(code, SpgemmError)
    return cls(details or "", code)
