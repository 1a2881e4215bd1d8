"""An address without a port means spgemmd's port, 50051, as for the C++
client, the CLI and the server (gRPC alone would take 443); the default
address is SPGEMM_SERVER, else localhost:50051."""

from __future__ import annotations

import pytest

import spgemm
from spgemm._address import with_default_port


def test_without_a_port_means_50051() -> None:
    assert with_default_port("localhost") == "localhost:50051"
    assert with_default_port("10.0.0.7") == "10.0.0.7:50051"
    assert with_default_port("gpu1:7000") == "gpu1:7000"
    assert with_default_port("[::1]") == "[::1]:50051"
    assert with_default_port("[::1]:7000") == "[::1]:7000"
    assert with_default_port("::1") == "[::1]:50051"
    assert with_default_port("dns:///spgemmd.svc") == "dns:///spgemmd.svc:50051"
    assert with_default_port("dns://8.8.8.8/spgemmd.svc:7000") == "dns://8.8.8.8/spgemmd.svc:7000"
    assert with_default_port("unix:/run/spgemmd.sock") == "unix:/run/spgemmd.sock"


def test_clients_take_the_port_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with spgemm.Client("127.0.0.1") as c:
        assert c.address == "127.0.0.1:50051"
    monkeypatch.setenv("SPGEMM_SERVER", "gpu7")
    with spgemm.Client() as c:
        assert c.address == "gpu7:50051"
    monkeypatch.delenv("SPGEMM_SERVER")
    with spgemm.Client() as c:
        assert c.address == "localhost:50051"
    with spgemm.Cluster(["127.0.0.1", "127.0.0.2:7000"]) as cluster:
        assert cluster.addresses == ["127.0.0.1:50051", "127.0.0.2:7000"]
