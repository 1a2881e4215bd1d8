"""Interrupts leave nothing behind: a KeyboardInterrupt (Ctrl-C) in the middle
of a product cancels its job on the server and deletes the operands uploaded
for it, whether the result was to come back or to be kept."""

from __future__ import annotations

import _thread
import signal
import threading
import time
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm

from conftest import Server, spgemmd_binary


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """A server of its own (nothing stored before), on one CPU thread whatever
    SPGEMM_TEST_BACKEND says: the job must outlast the polling below."""
    s = Server(spgemmd_binary(), tmp_path, 0)
    try:
        s.wait_ready()
        yield s
    finally:
        s.stop()


def dense_blocks(blocks: int, b: int) -> sp.csr_array:
    """Dense b x b blocks on the diagonal: b^2 products per entry, a product as large as the operand."""
    return sp.csr_array(sp.block_diag([np.ones((b, b))] * blocks, format="csr"))


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """Python's own SIGINT handler, which interrupt_main() needs: a shell that starts
    the tests in the background (`cmd &`) has them ignore SIGINT."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.mark.usefixtures("python_sigint")
@pytest.mark.parametrize("keep", [False, True], ids=["streamed", "kept"])
def test_keyboard_interrupt_cancels_the_job_and_deletes_its_operands(server: Server, keep: bool) -> None:
    a = dense_blocks(96, 128)
    with spgemm.Client(server.address, timeout=120, progress=False) as client, \
            spgemm.Client(server.address, timeout=30, progress=False) as watcher:
        assert watcher.list() == []
        finished = threading.Event()

        def interrupt_once_the_job_is_there() -> None:
            deadline = time.monotonic() + 60
            while not finished.is_set() and time.monotonic() < deadline:
                s = watcher.status()
                if s.jobs_running + s.queue_depth > 0:  # the upload has returned to the client
                    _thread.interrupt_main()
                    return
                time.sleep(0.002)

        poller = threading.Thread(target=interrupt_once_the_job_is_there, daemon=True)
        poller.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                client.multiply(a, keep=keep)
        finally:
            finished.set()
            poller.join()

        assert watcher.list() == [], "matrices left on the server"
        deadline = time.monotonic() + 60
        while watcher.status().jobs_running > 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert watcher.status().jobs_running == 0, "the job was not cancelled"
