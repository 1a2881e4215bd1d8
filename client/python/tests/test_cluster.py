"""spgemm.Cluster against three spgemmd processes on loopback (CPU backend).

Independent jobs spread over every server; a product split by row panels
equals the single-server product exactly; a server stopped mid-run has its
panels fail over to the others.
"""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Iterator, List

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm
from spgemm.cluster import is_failover_error, panel_bounds, split_addresses

from conftest import Server, spgemmd_binary


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[List[Server]]:
    """Three fresh spgemmd processes on free loopback ports."""
    binary = spgemmd_binary()
    started = [Server(binary, tmp_path, i) for i in range(3)]
    try:
        for s in started:
            s.wait_ready()
        yield started
    finally:
        for s in started:
            s.stop()


def random_csr(rows: int, cols: int, density: float, seed: int, dtype=np.float64) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    return sp.random_array((rows, cols), density=density, format="csr", dtype=dtype, rng=rng,
                           data_sampler=lambda size: rng.uniform(-1, 1, size))


def single_server(address: str, a, b) -> sp.csr_array:
    with spgemm.Client(address, timeout=120, progress=False) as c:
        return c.multiply(a, b)


def assert_same(c: sp.csr_array, ref: sp.csr_array) -> None:
    """Identical structure; values bit-identical (every CPU server computes a row the same way)."""
    assert c.shape == ref.shape
    assert c.dtype == ref.dtype
    np.testing.assert_array_equal(c.indptr, ref.indptr)
    np.testing.assert_array_equal(c.indices, ref.indices)
    np.testing.assert_allclose(c.data, ref.data, rtol=1e-12, atol=0)


def test_helpers() -> None:
    assert split_addresses(" a:1, b:2,,c:3 ") == ["a:1", "b:2", "c:3"]
    b = panel_bounds([0, 1, 2, 3, 4, 12, 13, 14, 15, 16], 3)
    assert b[0] == 0 and b[-1] == 9 and len(b) == 4 and all(x < y for x, y in zip(b, b[1:]))
    assert panel_bounds([0, 5, 5], 8) == [0, 1, 2]
    assert panel_bounds([0, 0, 0, 0, 0], 2) == [0, 2, 4]
    assert is_failover_error(spgemm.Unavailable("x")) and is_failover_error(spgemm.NotFound("x"))
    assert not is_failover_error(spgemm.InvalidArgument("x"))


def test_panels_equal_the_single_server_product(servers: List[Server]) -> None:
    a = random_csr(3000, 2000, 0.004, 1)
    b = random_csr(2000, 2500, 0.004, 2)
    ref = single_server(servers[0].address, a, b)
    with spgemm.Cluster([s.address for s in servers], timeout=120) as cluster:
        assert len(cluster) == 3
        for panels in (None, 1, 3, 7):
            c = cluster.multiply_panels(a, b, panels)
            assert_same(c, ref)
            reports = cluster.last_panels
            assert len(reports) == (panels or 3)
            assert [r.row_begin for r in reports][0] == 0 and reports[-1].row_end == 3000
            assert all(r.attempts == 1 for r in reports) and cluster.last_failed == []
            if (panels or 3) >= 3:
                assert {r.server for r in reports} == {0, 1, 2}
        # float32 in, float32 out; A @ A by default; a single-row panel edge.
        a32 = a.astype(np.float32)[:, :2000]
        assert_same(cluster.multiply_panels(a32, b.astype(np.float32), 5), single_server(servers[1].address, a32, b.astype(np.float32)))
        sq = random_csr(500, 500, 0.01, 3)
        assert_same(cluster.multiply_panels(sq, panels=500), single_server(servers[2].address, sq, sq))
        # The input's errors are raised at once and leave every server up.
        with pytest.raises(spgemm.InvalidArgument):
            cluster.multiply_panels(a, a)
        with pytest.raises(spgemm.InvalidArgument):
            cluster.multiply_panels(a, b, algorithm="no-such-method")
        assert all(cluster.is_up(i) for i in range(3))
        # Nothing left behind on the servers.
        assert all(c.list() == [] for c in cluster.clients)


def test_independent_jobs_spread_over_every_server(servers: List[Server]) -> None:
    mats = [random_csr(400, 400, 0.01, 10 + k) for k in range(9)]
    with spgemm.Cluster([s.address for s in servers], timeout=120) as cluster:
        results = cluster.multiply_all(mats)
        for m, c in zip(mats, results):
            ref = (m @ m).tocsr()
            assert c.shape == ref.shape and abs(c - ref).max() <= 1e-12 * max(1.0, abs(ref).max())
        done = [st.jobs_completed for st in cluster.status()]
        assert all(n >= 1 for n in done), "a server got no job: %s" % done
        assert sum(done) == 9
        # One at a time: ties go round robin, so three in a row hit three servers.
        used = set()
        for _ in range(3):
            cluster.multiply(mats[0])
            used.add(cluster.last_server)
        assert used == {0, 1, 2}
        # A pair job and a custom job.
        assert cluster.multiply_all([(mats[0], mats[1])])[0].shape == (400, 400)
        assert cluster.run(lambda c: c.status().version)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_stopped_server_fails_over_its_panels(servers: List[Server], sig: int) -> None:
    a = random_csr(20000, 20000, 0.0004, 7)
    ref = single_server(servers[0].address, a, a)
    victim = 1
    stopped = threading.Event()
    stopper: List[threading.Thread] = []

    def before_attempt(panel: int, server: int, attempt: int) -> None:
        if server != victim or stopped.is_set():
            return
        stopped.set()
        if sig == signal.SIGKILL:
            servers[victim].stop(sig)  # before the panel is sent: it must run elsewhere
        else:
            # Mid-panel: the panel's upload and multiply reach the server first;
            # the stop cancels them (no grace) and refuses what comes after.
            t = threading.Thread(target=lambda: (time.sleep(0.03), servers[victim].stop(sig)))
            t.start()
            stopper.append(t)

    with spgemm.Cluster([s.address for s in servers], timeout=120) as cluster:
        c = cluster.multiply_panels(a, a, 12, before_attempt=before_attempt)
        for t in stopper:
            t.join()
        assert stopped.is_set()
        assert_same(c, ref)
        retried = sum(r.attempts - 1 for r in cluster.last_panels)
        print("%s: %d panel attempt(s) failed over, servers marked down: %s" % (signal.Signals(sig).name, retried, cluster.last_failed))
        if sig == signal.SIGKILL:
            assert retried >= 1 and cluster.last_failed == [victim]
            assert not cluster.is_up(victim)
        assert sum(r.server == victim for r in cluster.last_panels) <= (0 if sig == signal.SIGKILL else 12)
        # The survivors hold nothing of ours afterwards.
        assert cluster.clients[0].list() == [] and cluster.clients[2].list() == []
        # Down to one server, then to none: the last connection error.
        servers[2].stop(signal.SIGKILL)
        assert_same(cluster.multiply_panels(a, a), ref)
        assert {r.server for r in cluster.last_panels} == {0}
        servers[0].stop(signal.SIGKILL)
        with pytest.raises(spgemm.SpgemmError) as info:
            cluster.multiply_panels(a, a)
        assert is_failover_error(info.value)
