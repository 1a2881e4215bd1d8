"""glibc's malloc thresholds for streamed results (spgemm._malloc), each case in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
    reason="glibc's malloc only",
)

# Whether a block comes mapped on its own (the IS_MMAPPED bit of its chunk
# header) or from the heap: 24 MiB before tune_for_streams(), 28 MiB after (the
# first one freed raises glibc's adaptive threshold to 24 MiB).
_PROBE = textwrap.dedent(
    """
    import ctypes
    from spgemm import _malloc
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = (ctypes.c_size_t,)
    libc.free.argtypes = (ctypes.c_void_p,)

    def mapped(size):
        p = libc.malloc(size)
        bit = ctypes.c_size_t.from_address(p - ctypes.sizeof(ctypes.c_size_t)).value & 2
        libc.free(p)
        return bool(bit)

    before = mapped(24 << 20)
    tuned = _malloc.tune_for_streams()
    print(before, tuned, mapped(28 << 20), _malloc.tune_for_streams())
    """
)


def probe(**env: str) -> list:
    environment = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES" and not k.startswith("MALLOC_")}
    environment.pop("SPGEMM_MALLOC_TUNING", None)
    environment.update(env)
    out = subprocess.run([sys.executable, "-c", _PROBE], env=environment, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_large_blocks_come_from_the_heap_once_tuned() -> None:
    before, tuned, after, again = probe()
    assert before == "True"  # glibc's default: a block this large is mapped on its own
    assert (tuned, after, again) == ("True", "False", "True")


@pytest.mark.parametrize(
    "env",
    [{"SPGEMM_MALLOC_TUNING": "0"}, {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1048576"}, {"MALLOC_TOP_PAD_": "0"}],
)
def test_left_alone_where_told_or_configured(env: dict) -> None:
    assert probe(**env) == ["True", "False", "True", "False"]
