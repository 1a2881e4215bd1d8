"""glibc's malloc thresholds, set once so that streamed results stop faulting their receive buffers in.

gRPC reads a result stream into buffers of a few MiB and frees each once its
message is parsed. glibc's thresholds adapt to the largest block freed so far:
after a 2 MiB buffer, blocks from 2 MiB are mapped afresh and the heap is
trimmed above 4 MiB, so every download hands its buffers back to the kernel and
faults them in again (56,000-67,000 page faults and half the client's system
CPU for a 250-310 MB result; bench/results/cpu-wire-malloc). The thresholds are set to the values glibc itself
adopts once a 32 MiB block has been freed, the largest it adapts to: blocks
mapped from 32 MiB, the heap trimmed above 64 MiB.

Left alone where the C library is not glibc, where the environment configures
malloc already (GLIBC_TUNABLES, MALLOC_*_), or with SPGEMM_MALLOC_TUNING=0.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20
# mallopt's parameter numbers (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_ENVIRONMENT = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")

_lock = threading.Lock()
_decided = False
_tuned = False


def _configured_elsewhere() -> bool:
    if os.environ.get("SPGEMM_MALLOC_TUNING", "1").strip().lower() in ("0", "false", "no", "off"):
        return True
    if "malloc." in os.environ.get("GLIBC_TUNABLES", ""):
        return True
    return any(name in os.environ for name in _ENVIRONMENT)


def tune_for_streams() -> bool:
    """Sets the thresholds once per process; whether they are set (now or before)."""
    global _decided, _tuned
    with _lock:
        if _decided:
            return _tuned
        _decided = True
        _tuned = False
        if not sys.platform.startswith("linux") or _configured_elsewhere():
            return False
        try:
            libc = ctypes.CDLL(None)
            libc.gnu_get_libc_version  # only glibc has it (and mallopt's numbering)
            mallopt = libc.mallopt
        except (OSError, AttributeError):
            return False
        mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
        mallopt.restype = ctypes.c_int
        _tuned = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
        return _tuned

