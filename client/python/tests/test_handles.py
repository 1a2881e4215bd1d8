"""Handles are freed: context managers, temporary uploads, explicit deletes (checked with List)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm


def test_context_manager_frees(client: spgemm.Client, handles) -> None:
    a = sp.random_array((500, 500), density=0.01, format="csr", rng=np.random.default_rng(0))
    before = handles()
    with client.upload(a, name="ctx") as r:
        assert r.handle in handles()
        assert any(m.handle == r.handle and m.name == "ctx" for m in client.list())
        with r @ r as r2:
            assert {r.handle, r2.handle} <= handles()
        assert r2.deleted and r2.handle not in handles()
    assert r.deleted
    assert handles() == before
    r.delete()  # idempotent


def test_context_manager_frees_on_error(client: spgemm.Client, handles) -> None:
    before = handles()
    try:
        with client.upload(sp.csr_array(np.eye(5))):
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert handles() == before


def test_temporary_uploads_deleted(client: spgemm.Client, handles) -> None:
    a = sp.random_array((400, 300), density=0.02, format="csr", rng=np.random.default_rng(1))
    b = sp.random_array((300, 200), density=0.02, format="csr", rng=np.random.default_rng(2))
    before = handles()
    client.multiply(a, b)
    client.multiply(a.T @ a)
    client.transpose(a)
    assert handles() == before
    try:
        client.multiply(a, a)  # shape mismatch: the temporaries still go
    except spgemm.InvalidArgument:
        pass
    assert handles() == before


def test_explicit_delete(client: spgemm.Client, handles) -> None:
    r = client.upload(sp.csr_array(np.eye(4)))
    assert r.handle in handles()
    assert client.delete(r.handle) >= 0
    assert r.handle not in handles()


def test_a_download_that_deletes(client: spgemm.Client, handles) -> None:
    """DownloadRequest.then_delete: the matrix comes whole and is gone; an unknown one is NOT_FOUND."""
    a = sp.random_array((300, 300), density=0.02, format="csr", rng=np.random.default_rng(3))
    r = client.upload(a)
    call = client._rpc.Download(spgemm.client.pb.DownloadRequest(handle=r.handle, then_delete=True), **client._kw())
    got, _, _ = client._results(call, False, "download")
    assert (got != a).nnz == 0
    assert r.handle not in handles()
    with pytest.raises(spgemm.NotFound):
        client.describe(r.handle)
    call = client._rpc.Download(spgemm.client.pb.DownloadRequest(handle=r.handle, then_delete=True), **client._kw())
    with pytest.raises(spgemm.NotFound):
        client._results(call, False, "download")


def test_list_follows_the_pages(client: spgemm.Client, handles) -> None:
    # The server answers a page of at most 1000 matrices; list() follows next_page_token.
    before = handles()
    one = sp.csr_array(np.eye(1))
    uploaded = [client.upload(one, name=f"page-{i}") for i in range(1001)]
    try:
        listed = [m.handle for m in client.list() if m.handle not in before]
        assert listed == [r.handle for r in uploaded]  # each once, oldest first
    finally:
        for r in uploaded:
            r.delete()
    assert handles() == before
