"""Exceptions raised by the spgemm client.

Every failed RPC becomes an instance of a subclass of :class:`SpgemmError`
carrying the gRPC status code and the server's message. The mapping from
status codes to classes lives in one place, :data:`ERRORS_BY_CODE`, and is
applied by :func:`from_rpc_error`.
"""

from __future__ import annotations

from typing import Dict, Optional, Type

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


class SpgemmError(Exception):
    """Base class of every error the client raises for a failed call.

    Attributes:
        code: the gRPC status code (``None`` for :class:`ProtocolError`).
        details: the server's message, verbatim.
    """

    code: Optional[grpc.StatusCode] = None

    def __init__(self, details: str, code: Optional[grpc.StatusCode] = None) -> None:
        if code is not None:
            self.code = code
        self.details: str = details
        name = self.code.name if self.code is not None else "PROTOCOL"
        super().__init__("%s: %s" % (name, details))


class Cancelled(SpgemmError):
    """The call was cancelled (CANCELLED); the server stopped the job."""

    code = grpc.StatusCode.CANCELLED


class Unknown(SpgemmError):
    """An error the server could not classify (UNKNOWN)."""

    code = grpc.StatusCode.UNKNOWN


class InvalidArgument(SpgemmError, ValueError):
    """Malformed CSR, mismatched shapes, a bad header or algorithm name (INVALID_ARGUMENT)."""

    code = grpc.StatusCode.INVALID_ARGUMENT


class DeadlineExceeded(SpgemmError, TimeoutError):
    """The call's deadline passed (DEADLINE_EXCEEDED); the server stopped the job."""

    code = grpc.StatusCode.DEADLINE_EXCEEDED


class NotFound(SpgemmError, KeyError):
    """An unknown, expired or deleted handle (NOT_FOUND)."""

    code = grpc.StatusCode.NOT_FOUND

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return Exception.__str__(self)


class AlreadyExists(SpgemmError):
    """ALREADY_EXISTS."""

    code = grpc.StatusCode.ALREADY_EXISTS


class PermissionDenied(SpgemmError):
    """The caller may not touch this resource (PERMISSION_DENIED)."""

    code = grpc.StatusCode.PERMISSION_DENIED


class ResourceExhausted(SpgemmError, MemoryError):
    """A job or matrix that can never fit the server's budget, or a full queue (RESOURCE_EXHAUSTED)."""

    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class FailedPrecondition(SpgemmError):
    """FAILED_PRECONDITION."""

    code = grpc.StatusCode.FAILED_PRECONDITION


class Aborted(SpgemmError):
    """ABORTED."""

    code = grpc.StatusCode.ABORTED


class OutOfRange(SpgemmError):
    """OUT_OF_RANGE."""

    code = grpc.StatusCode.OUT_OF_RANGE


class Unimplemented(SpgemmError):
    """The server does not implement this call (UNIMPLEMENTED)."""

    code = grpc.StatusCode.UNIMPLEMENTED


class Internal(SpgemmError):
    """A server-side failure, e.g. of a device (INTERNAL); the server stays up."""

    code = grpc.StatusCode.INTERNAL


class Unavailable(SpgemmError, ConnectionError):
    """The server cannot be reached or is shutting down (UNAVAILABLE)."""

    code = grpc.StatusCode.UNAVAILABLE


class DataLoss(SpgemmError):
    """DATA_LOSS."""

    code = grpc.StatusCode.DATA_LOSS


class Unauthenticated(SpgemmError):
    """Missing or bad credentials (UNAUTHENTICATED)."""

    code = grpc.StatusCode.UNAUTHENTICATED


class ProtocolError(SpgemmError):
    """The server's reply broke the wire contract (e.g. chunks out of order); a client or server bug."""

    code = None


#: The one place where gRPC status codes map to exception classes.
ERRORS_BY_CODE: Dict[grpc.StatusCode, Type[SpgemmError]] = {
    cls.code: cls
    for cls in (
        Cancelled,
        Unknown,
        InvalidArgument,
        DeadlineExceeded,
        NotFound,
        AlreadyExists,
        PermissionDenied,
        ResourceExhausted,
        FailedPrecondition,
        Aborted,
        OutOfRange,
        Unimplemented,
        Internal,
        Unavailable,
        DataLoss,
        Unauthenticated,
    )
}


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
