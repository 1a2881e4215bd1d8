"""Fixtures: a real spgemmd (CPU backend) for the session, a client, the shared matrices.

Environment:
    SPGEMMD                 the server binary (default <repo>/build/server/spgemmd)
    SPGEMM_REQUIRE_SERVER=1 a missing server or matrix folder fails the run
                            instead of skipping, and so does any skipped test (CI)
    SPGEMM_MATRICES         folder of *.mtx / *.mtx.gz (default <repo>/../shared/matrices)
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import time
import zlib
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import spgemm

REPO = Path(__file__).resolve().parents[3]
#: The start of the reason of a skip that only the GPU host can avoid (no CuPy,
#: no GPU, a CPU server): CI, which has neither, does not count those.
GPU_ONLY = "GPU host only: "


def require() -> bool:
    """CI mode: missing prerequisites fail instead of skipping."""
    return os.environ.get("SPGEMM_REQUIRE_SERVER", "") not in ("", "0")


def missing(message: str) -> None:
    """Fails (CI) or skips (a developer's clone) with a clear message."""
    if require():
        pytest.fail(message + " (SPGEMM_REQUIRE_SERVER=1)", pytrace=False)
    pytest.skip(message)


def matrices_dir() -> Path:
    return Path(os.environ.get("SPGEMM_MATRICES") or REPO.parent / "shared" / "matrices")


def matrix_names() -> List[Optional[str]]:
    """Names (file names without .mtx[.gz]) of the shared matrices; [None] when there are none."""
    d = matrices_dir()
    names = sorted(
        p.name[: -len(".mtx.gz")] if p.name.endswith(".mtx.gz") else p.name[: -len(".mtx")]
        for p in d.glob("*.mtx*")
        if p.name.endswith((".mtx", ".mtx.gz"))
    ) if d.is_dir() else []
    return names or [None]


@functools.lru_cache(maxsize=None)
def load_matrix(name: Optional[str]) -> sp.csr_array:
    """A shared matrix as float64 CSR; symmetric files expanded, pattern files given seeded random values."""
    if name is None:
        missing("no Matrix Market files in %s (set SPGEMM_MATRICES)" % matrices_dir())
    d = matrices_dir()
    path = d / (name + ".mtx.gz")
    if not path.exists():
        path = d / (name + ".mtx")
    if not path.exists():
        missing("%s.mtx.gz not found in %s (set SPGEMM_MATRICES)" % (name, d))
    m = scipy.io.mmread(str(path))
    field = scipy.io.mminfo(str(path))[4]
    a = sp.csr_array(m, dtype=np.float64)
    a.sum_duplicates()
    if field == "pattern":
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        a.data = rng.uniform(-1.0, 1.0, a.nnz)
    return a


def count_calls(client: spgemm.Client, monkeypatch: pytest.MonkeyPatch) -> List[str]:
    """The names of the Spgemm methods `client` calls from now on (until monkeypatch undoes it)."""
    calls: List[str] = []
    real = client._rpc

    class Counting:
        def __getattr__(self, method: str):
            calls.append(method)
            return getattr(real, method)

    monkeypatch.setattr(client, "_rpc", Counting())
    return calls


def assert_product_close(c: sp.sparray, a: sp.sparray, b: sp.sparray, rtol: float) -> None:
    """c equals a @ b: same structure up to explicit zeros, |c - ref| <= rtol * (|a||b|) entry-wise.

    Beyond the relative bound, differences below the smallest normal number
    of c's type are accepted (float32 products of tiny values underflow).

    The reference is computed by scipy in float64. Entries of c outside the
    structural product (explicit zeros of a and b included) are errors even
    when zero; entries scipy dropped as exact zeros must be (nearly) zero in c.
    """
    a64 = sp.csr_array(a, dtype=np.float64)
    b64 = sp.csr_array(b, dtype=np.float64)
    assert c.shape == (a.shape[0], b.shape[1])
    c = sp.csr_array(c)
    assert c.has_sorted_indices, "result rows are not sorted"
    ref = a64 @ b64
    bound = abs(a64) @ abs(b64)  # the scale of every entry (scipy drops entries that are exactly 0)
    # Structure: c's pattern within the structural product (stored zeros of a and b count).
    pa = sp.csr_array((np.ones(a64.nnz), a64.indices, a64.indptr), shape=a64.shape)
    pb_ = sp.csr_array((np.ones(b64.nnz), b64.indices, b64.indptr), shape=b64.shape)
    structure = pa @ pb_
    pc = sp.csr_array((np.ones(c.nnz), c.indices, c.indptr), shape=c.shape)
    outside = pc - pc.multiply(structure.astype(bool))
    outside.eliminate_zeros()
    assert outside.nnz == 0, "%d result entries outside the structural product" % outside.nnz
    # Values: |c - ref| <= rtol * bound, entry-wise (a missing entry counts as its ref value).
    excess = abs(sp.csr_array(c, dtype=np.float64) - ref) - rtol * bound
    worst = excess.data.max(initial=0.0)
    assert worst <= float(np.finfo(c.dtype).tiny), "entries differ from scipy beyond %g x |A||B| (worst excess %g)" % (rtol, worst)


def spgemmd_binary() -> str:
    """SPGEMMD, or the build's spgemmd (missing: skip, or fail in CI)."""
    binary = os.environ.get("SPGEMMD") or str(REPO / "build" / "server" / "spgemmd")
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        missing("spgemmd not found at %s (build it, or set SPGEMMD to the binary)" % binary)
    return binary


class Server:
    """A spgemmd of a test's own: CPU backend, one thread (several may share the machine), no grace on SIGTERM."""

    def __init__(self, binary: str, tmp: Path, index: int, extra: Sequence[str] = ()) -> None:
        self.port_file = tmp / ("port%d" % index)
        self.log_path = tmp / ("spgemmd%d.log" % index)
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [binary, "--listen=127.0.0.1:0", "--port_file=%s" % self.port_file, "--metrics_listen=",
             "--backend=cpu", "--cpu_threads=1", "--grace_seconds=0", "--warmup=false", *extra],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.address = ""

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                pytest.fail("spgemmd exited with %s:\n%s" % (self.proc.returncode, self.log_path.read_text(errors="replace")[-4000:]))
            try:
                self.address = "127.0.0.1:%d" % int(self.port_file.read_text().strip())
                return
            except (OSError, ValueError):
                if time.monotonic() > deadline:
                    pytest.fail("spgemmd wrote no port within 30 s")
                time.sleep(0.02)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


@contextlib.contextmanager
def spgemmd(tmp: Path, *flags: str) -> Iterator[Tuple[str, str]]:
    """Runs spgemmd on a free loopback port and a Unix socket in `tmp`, with ``flags``.

    Yields (host:port, unix:///path). The backend is the CPU unless
    SPGEMM_TEST_BACKEND says otherwise ("auto" on a GPU host).
    """
    binary = spgemmd_binary()
    port_file = tmp / "port"
    socket = tmp / "spgemmd.sock"
    log_path = tmp / "spgemmd.log"
    log = open(log_path, "wb")
    proc = subprocess.Popen(
        [binary, "--listen=127.0.0.1:0", "--port_file=%s" % port_file, "--unix_socket=%s" % socket,
         "--metrics_listen=", "--backend=%s" % os.environ.get("SPGEMM_TEST_BACKEND", "cpu"), *flags],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        port = None
        while port is None:
            if proc.poll() is not None:
                pytest.fail("spgemmd exited with %s:\n%s" % (proc.returncode, log_path.read_text(errors="replace")[-4000:]))
            if time.monotonic() > deadline:
                pytest.fail("spgemmd wrote no port to %s within 60 s:\n%s" % (port_file, log_path.read_text(errors="replace")[-4000:]))
            try:
                port = int(port_file.read_text().strip())
            except (OSError, ValueError):
                time.sleep(0.05)
        yield "127.0.0.1:%d" % port, "unix://%s" % socket
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="session")
def server_addresses(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tuple[str, str]]:
    """spgemmd for the session: (host:port, unix:///path)."""
    with spgemmd(tmp_path_factory.mktemp("spgemmd")) as addresses:
        yield addresses


@pytest.fixture(scope="session")
def server_address(server_addresses: Tuple[str, str]) -> str:
    """host:port of the session's spgemmd."""
    return server_addresses[0]


@pytest.fixture(scope="session")
def client(server_address: str) -> Iterator[spgemm.Client]:
    """A client of the session's server over the wire (generous deadline, no progress bars)."""
    with spgemm.Client(server_address, timeout=300, progress=False, transfer="wire") as c:
        yield c


@pytest.fixture
def handles(client: spgemm.Client):
    """A function returning the set of handles the server holds now."""
    return lambda: {m.handle for m in client.list()}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """In CI (SPGEMM_REQUIRE_SERVER=1) a run that skipped anything but GPU-only tests, or ran nothing, fails."""
    if not require() or exitstatus != 0:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    stats = reporter.stats if reporter is not None else {}
    skipped = len([r for r in stats.get("skipped", []) if GPU_ONLY not in str(getattr(r, "longrepr", ""))])
    passed = len(stats.get("passed", []))
    if skipped or passed == 0:
        if reporter is not None:
            reporter.write_line(
                "SPGEMM_REQUIRE_SERVER=1: %d passed, %d skipped: failing the run" % (passed, skipped), red=True
            )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
