"""POSIX shared-memory objects this process creates for the server to read and write.

Linux keeps them as files under ``/dev/shm``; the server opens one by its
name (``shm_open``). Each is created with mode 0600 (readable by processes of
this user only), mapped here, and unlinked when closed.
"""

from __future__ import annotations

import mmap
import os
import secrets
from typing import Optional

import numpy as np

SHM_DIR = "/dev/shm"


def available() -> bool:
    """Whether this host has POSIX shared memory where Linux keeps it."""
    return os.path.isdir(SHM_DIR) and os.access(SHM_DIR, os.W_OK)


class SharedMemory:
    """A new POSIX shared-memory object of ``size`` bytes, mapped read-write.

    Its :attr:`key` is what the server opens (``/spgemm-<pid>-<random>``).
    With ``allocate``, its memory is allocated now (OSError where /dev/shm
    lacks the room), instead of page by page as it is first written.
    """

    def __init__(self, size: int, allocate: bool = False) -> None:
        self.size = int(size)
        name = "spgemm-%d-%s" % (os.getpid(), secrets.token_hex(8))
        self.key = "/" + name
        self._path = os.path.join(SHM_DIR, name)
        fd = os.open(self._path, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.ftruncate(fd, self.size)
            if allocate and self.size:
                os.posix_fallocate(fd, 0, self.size)
            self.map: Optional[mmap.mmap] = mmap.mmap(fd, self.size) if self.size else None
        except BaseException:
            os.close(fd)
            os.unlink(self._path)
            raise
        os.close(fd)

    def array(self, offset: int, count: int, dtype: np.dtype) -> np.ndarray:
        """A numpy view of ``count`` items of ``dtype`` at byte ``offset`` (valid until close)."""
        if count == 0:
            return np.empty(0, dtype=dtype)
        return np.frombuffer(self.map, dtype=dtype, count=count, offset=offset)  # type: ignore[arg-type]

    def unlink(self) -> None:
        """Removes the object's name; its memory lives on while mapped."""
        try:
            os.unlink(self._path)
        except FileNotFoundError:
            pass

    def close(self) -> None:
        """Unmaps and unlinks the object (views of it must be gone)."""
        if self.map is not None:
            self.map.close()
            self.map = None
        self.unlink()
