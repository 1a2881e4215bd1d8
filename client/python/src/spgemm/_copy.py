"""Array copies off the calling thread: numpy releases the GIL while it copies,
so copies on a few threads run beside the caller and beside each other (one
thread moves a few GB/s, memory several times that; writing fresh pages also
pays their first-touch faults, which run in parallel too)."""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Optional

import numpy as np

# Copies larger than this are split across threads.
_PARALLEL_COPY_BYTES = 8 << 20
THREADS = max(1, min(8, os.cpu_count() or 1))
_pool: Optional[ThreadPoolExecutor] = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(THREADS, thread_name_prefix="spgemm-copy")
        return _pool


def copy(dst: np.ndarray, src: np.ndarray) -> None:
    """dst[:] = src (casting where the types differ), split across threads when large."""
    n = dst.size
    if dst.nbytes < _PARALLEL_COPY_BYTES or THREADS == 1:
        np.copyto(dst, src, casting="unsafe")
        return
    step = -(-n // THREADS)
    parts = [(i, min(n, i + step)) for i in range(0, n, step)]
    list(_executor().map(lambda p: np.copyto(dst[p[0] : p[1]], src[p[0] : p[1]], casting="unsafe"), parts))


def submit(dst: np.ndarray, src: np.ndarray) -> "Future[None]":
    """dst[:] = src on a copy thread; the caller keeps both alive until the future is done."""
    return _executor().submit(np.copyto, dst, src, casting="unsafe")
