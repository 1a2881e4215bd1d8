"""Plain-Python views of the server's replies (MatrixInfo, JobStats, ServerStatus)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import numpy as np

from .v1 import spgemm_pb2 as pb

__all__ = ["MatrixInfo", "JobStats", "DeviceStatus", "ServerStatus"]


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

    @classmethod
    def from_proto(cls, m: pb.MatrixInfo) -> "MatrixInfo":
        """Converts a spgemm.v1.MatrixInfo message."""
        dt = {pb.FLOAT32: np.dtype(np.float32), pb.FLOAT64: np.dtype(np.float64)}.get(m.value_type, np.dtype(np.float64))
        residency = {pb.DEVICE: "device", pb.HOST: "host"}.get(m.residency, "unspecified")
        return cls(
            handle=m.handle,
            name=m.name,
            shape=(int(m.rows), int(m.cols)),
            nnz=int(m.nnz),
            dtype=dt,
            bytes=int(m.bytes),
            residency=residency,
            device=m.device,
            created=_time(m, "created"),
            last_used=_time(m, "last_used"),
            ttl_seconds=int(m.ttl_seconds),
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
        return cls(
            algorithm=s.algorithm,
            device=s.device,
            queue_ms=s.queue_ms,
            compute_ms=s.compute_ms,
            total_ms=s.total_ms,
            flops=s.flops,
            gflops=s.gflops,
            nnz=int(s.nnz),
            estimate_bytes=int(s.estimate_bytes),
            bytes_out=int(s.bytes_out),
        )


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

    @classmethod
    def from_proto(cls, d: pb.DeviceStatus) -> "DeviceStatus":
        """Converts a spgemm.v1.DeviceStatus message."""
        return cls(
            name=d.name,
            description=d.description,
            is_gpu=d.is_gpu,
            total_bytes=int(d.total_bytes),
            free_bytes=int(d.free_bytes),
            budget_bytes=int(d.budget_bytes),
            cached_bytes=int(d.cached_bytes),
            reserved_bytes=int(d.reserved_bytes),
            jobs_running=int(d.jobs_running),
            peak_bytes=int(d.peak_bytes),
        )


@dataclass(frozen=True)
class ServerStatus:
    """What Status reports: version, devices, queue, cache and job counts."""

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

    @classmethod
    def from_proto(cls, s: pb.ServerStatus) -> "ServerStatus":
        """Converts a spgemm.v1.ServerStatus message."""
        return cls(
            version=s.version,
            devices=[DeviceStatus.from_proto(d) for d in s.devices],
            queue_depth=int(s.queue_depth),
            jobs_running=int(s.jobs_running),
            matrices=int(s.matrices),
            host_cached_bytes=int(s.host_cached_bytes),
            host_budget_bytes=int(s.host_budget_bytes),
            uptime_seconds=s.uptime_seconds,
            jobs_completed=int(s.jobs_completed),
            jobs_failed=int(s.jobs_failed),
        )
