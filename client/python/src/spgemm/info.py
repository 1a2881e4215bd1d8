"""Plain-Python views of the server's replies (MatrixInfo, JobStats, ServerStatus)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional, Tuple, Type, TypeVar

import numpy as np

from .v1 import spgemm_pb2 as pb

__all__ = ["MatrixInfo", "JobStats", "DeviceStatus", "TenantQuotas", "ServerStatus"]


_T = TypeVar("_T")

# Conversions by a dataclass field's annotation (a string here, see the
# __future__ import).
_CONVERT: Dict[str, Any] = {"int": int, "float": float, "str": str, "bool": bool}


def _from_fields(cls: Type[_T], msg: Any, **given: Any) -> _T:
    """An instance of dataclass ``cls``: the fields in ``given`` as given, every
    other one copied from the message field of the same name and converted to
    its annotated type."""
    copied = {
        f.name: _CONVERT[str(f.type)](getattr(msg, f.name))
        for f in fields(cls)  # type: ignore[arg-type]
        if f.name not in given
    }
    return cls(**copied, **given)


def _time(msg: pb.MatrixInfo, name: str) -> Optional[datetime.datetime]:
    if not msg.HasField(name):
        return None
    ts = getattr(msg, name)
    return datetime.datetime.fromtimestamp(ts.seconds + ts.nanos * 1e-9, tz=datetime.timezone.utc)


@dataclass(frozen=True)
class MatrixInfo:
    """A matrix stored on the server, as Upload, Describe and List report it."""

    handle: str
    name: str
    shape: Tuple[int, int]
    nnz: int
    dtype: np.dtype
    bytes: int
    residency: str  #: "device", "host" or "unspecified"
    device: str  #: e.g. "cuda:0" or "cpu"
    created: Optional[datetime.datetime]
    last_used: Optional[datetime.datetime]
    ttl_seconds: int
    tenant: str = ""  #: its owner ("" on a server without tokens)

    @classmethod
    def from_proto(cls, m: pb.MatrixInfo) -> "MatrixInfo":
        """Converts a spgemm.v1.MatrixInfo message."""
        dt = {pb.FLOAT32: np.dtype(np.float32), pb.FLOAT64: np.dtype(np.float64)}.get(m.value_type, np.dtype(np.float64))
        residency = {pb.DEVICE: "device", pb.HOST: "host"}.get(m.residency, "unspecified")
        return _from_fields(
            cls,
            m,
            shape=(int(m.rows), int(m.cols)),
            dtype=dt,
            residency=residency,
            created=_time(m, "created"),
            last_used=_time(m, "last_used"),
        )


@dataclass(frozen=True)
class JobStats:
    """Server-side figures of one product, Galerkin product or transpose."""

    algorithm: str
    device: str
    queue_ms: float
    compute_ms: float
    total_ms: float
    flops: float  #: 2 x scalar products
    gflops: float  #: flops / compute time
    nnz: int  #: of the result
    estimate_bytes: int  #: memory the job was admitted with
    bytes_out: int  #: result bytes sent (0 when kept)

    @classmethod
    def from_proto(cls, s: pb.JobStats) -> "JobStats":
        """Converts a spgemm.v1.JobStats message."""
        return _from_fields(cls, s)


@dataclass(frozen=True)
class DeviceStatus:
    """One device of the server: memory, budget and use."""

    name: str
    description: str
    is_gpu: bool
    total_bytes: int
    free_bytes: int
    budget_bytes: int
    cached_bytes: int
    reserved_bytes: int
    jobs_running: int
    peak_bytes: int
    jobs_queued: int = 0  #: jobs waiting that were placed here
    panels_in_flight: int = 0  #: row panels of products too large for one device, here now
    bytes_to_device: int = 0  #: copied host -> device since start
    bytes_to_host: int = 0  #: copied device -> host
    bytes_from_peer: int = 0  #: copied here from another device

    @classmethod
    def from_proto(cls, d: pb.DeviceStatus) -> "DeviceStatus":
        """Converts a spgemm.v1.DeviceStatus message."""
        return _from_fields(cls, d)


@dataclass(frozen=True)
class TenantQuotas:
    """The limits of the caller's tenant (0: none)."""

    device_bytes: int = 0  #: its matrices cached on the devices
    host_bytes: int = 0  #: its matrices in host memory
    running_jobs: int = 0  #: its jobs running at once (more wait)
    queued_jobs: int = 0  #: its jobs waiting at once (more are refused)

    @classmethod
    def from_proto(cls, q: pb.TenantQuotas) -> "TenantQuotas":
        """Converts a spgemm.v1.TenantQuotas message."""
        return _from_fields(cls, q)


@dataclass(frozen=True)
class ServerStatus:
    """What Status reports: version, devices, queue, cache and job counts.

    A caller that is not an admin sees its own tenant's part: its matrices,
    jobs and bytes cached; of the devices only their names, sizes and budgets.
    """

    version: str
    devices: List[DeviceStatus] = field(default_factory=list)
    queue_depth: int = 0
    jobs_running: int = 0
    matrices: int = 0
    host_cached_bytes: int = 0
    host_budget_bytes: int = 0
    uptime_seconds: float = 0.0
    jobs_completed: int = 0
    jobs_failed: int = 0
    tenant: str = ""  #: the caller's, as its token names it
    admin: bool = False  #: whether the caller sees every tenant's matrices and the whole server
    quotas: TenantQuotas = field(default_factory=TenantQuotas)
    spill_bytes: int = 0  #: kept results past the host budget, in the server's spill files
    spill_budget_bytes: int = 0  #: 0: the server has no spill directory

    @classmethod
    def from_proto(cls, s: pb.ServerStatus) -> "ServerStatus":
        """Converts a spgemm.v1.ServerStatus message."""
        return _from_fields(
            cls, s, devices=[DeviceStatus.from_proto(d) for d in s.devices], quotas=TenantQuotas.from_proto(s.quotas)
        )
