"""The client against a spgemmd that asks for TLS, a client certificate and a bearer token.

The credentials are deploy/make-credentials.sh's (a CA, the server's certificate,
an admin token), plus a client certificate its CA signs and a second tenant's
token, made with openssl for the run.
"""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path
from typing import Iterator, NamedTuple

import grpc
import numpy as np
import pytest
import scipy.sparse as sp

import spgemm
from spgemm.v1 import local_pb2 as lpb
from spgemm.v1 import spgemm_pb2 as pb

from conftest import REPO, spgemmd


class Secured(NamedTuple):
    address: str
    unix: str  #: unix:///path of the same server (no TLS there; tokens all the same)
    dir: Path
    admin: str  #: the admin token
    bob: str  #: a token of tenant bob

    def client(self, token: str, **kw) -> spgemm.Client:
        kw.setdefault("root_certificates", self.dir / "ca.crt")
        kw.setdefault("certificate_chain", self.dir / "client.crt")
        kw.setdefault("private_key", self.dir / "client.key")
        # The server's certificate names localhost; the address is 127.0.0.1.
        options = [("grpc.ssl_target_name_override", "localhost")]
        return spgemm.Client(self.address, token=token, timeout=60, progress=False, options=options, **kw)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    d = tmp_path_factory.mktemp("credentials") / "credentials"
    made = subprocess.run(["bash", str(REPO / "deploy" / "make-credentials.sh"), str(d)],
                          check=True, capture_output=True, text=True)
    admin = made.stdout.split("admin token: ", 1)[1].split()[0]
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    subprocess.run(["openssl", "req", *key, "-keyout", "client.key", "-out", "client.csr", "-subj", "/CN=client"],
                   cwd=d, check=True, capture_output=True)
    (d / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    subprocess.run(["openssl", "x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                    "-CAcreateserial", "-days", "2", "-extfile", "client.ext", "-out", "client.crt"],
                   cwd=d, check=True, capture_output=True)
    bob = secrets.token_hex(24)
    with open(d / "tokens", "a") as f:
        f.write("%s bob queued_jobs=4\n" % bob)
    flags = ["--tls_cert=%s" % (d / "tls.crt"), "--tls_key=%s" % (d / "tls.key"),
             "--tls_client_ca=%s" % (d / "ca.crt"), "--tokens_file=%s" % (d / "tokens")]
    with spgemmd(tmp_path_factory.mktemp("secured"), *flags) as (address, unix):
        yield Secured(address, unix, d, admin, bob)


def test_token_and_certificates_reach_the_server(secured: Secured) -> None:
    a = sp.random_array((60, 60), density=0.05, format="csr", rng=np.random.default_rng(3))
    with secured.client(secured.bob) as c:
        status = c.status()
        assert (status.tenant, status.admin, status.quotas.queued_jobs) == ("bob", False, 4)
        with c.upload(a, name="bobs") as r:
            assert r.info.tenant == "bob"
            c2 = c.multiply(r, r)
            assert abs(c2 - a @ a).max() < 1e-12


def test_without_a_token_the_server_refuses(secured: Secured) -> None:
    with secured.client("") as c:
        with pytest.raises(spgemm.Unauthenticated) as e:
            c.list()
        assert "bearer token" in e.value.details
    with secured.client("not-a-token-of-this-server") as c:
        with pytest.raises(spgemm.Unauthenticated):
            c.status()


def test_without_a_client_certificate_the_handshake_fails(secured: Secured) -> None:
    with spgemm.Client(secured.address, token=secured.admin, root_certificates=secured.dir / "ca.crt",
                       options=[("grpc.ssl_target_name_override", "localhost")], timeout=10) as c:
        with pytest.raises(spgemm.Unavailable):
            c.status()
    with pytest.raises(ValueError):
        spgemm.Client(secured.address, certificate_chain=secured.dir / "client.crt")


def test_another_tenants_matrix_is_not_found_and_the_admin_sees_it(secured: Secured) -> None:
    with secured.client(secured.bob) as bob, secured.client(secured.admin) as admin:
        with bob.upload(sp.csr_array(np.eye(4)), name="private") as r:
            with pytest.raises(spgemm.NotFound):
                admin.describe("m-" + "0" * 32)
            mine = admin.upload(sp.csr_array(np.eye(4)))
            with pytest.raises(spgemm.NotFound):
                bob.describe(mine.handle)
            with pytest.raises(spgemm.NotFound):
                bob.multiply(r, mine.handle)
            assert mine.handle not in {m.handle for m in bob.list()}
            seen = {m.handle: m.tenant for m in admin.list()}
            assert seen[r.handle] == "bob" and seen[mine.handle] == "admin"
            assert admin.status().admin
            mine.delete()


def test_shared_memory_authenticates_and_keeps_each_tenants_regions_its_own(secured: Secured) -> None:
    a = sp.random_array((80, 80), density=0.05, format="csr", rng=np.random.default_rng(5))
    # Without a token the Local service refuses as Spgemm does, over TLS and the Unix socket alike.
    with secured.client("", transfer="shared_memory") as tls, \
            spgemm.Client(secured.unix, timeout=60, progress=False, transfer="shared_memory") as unix:
        for c in (tls, unix):
            with pytest.raises(spgemm.FailedPrecondition, match="bearer token"):
                c.upload(a)
    # With tokens: each tenant's regions are its own; the admin sees them all.
    with secured.client(secured.bob, transfer="shared_memory") as bob, \
            spgemm.Client(secured.unix, token=secured.admin, timeout=60, progress=False,
                          transfer="shared_memory") as admin:
        assert bob.transfer == "shared_memory" and admin.transfer == "shared_memory"
        with bob.upload(a) as r:
            assert r.info.tenant == "bob"
            assert abs(bob.multiply(r, r) - a @ a).max() < 1e-12
        with admin.upload(a) as r:
            assert abs(admin.multiply(r, r) - a @ a).max() < 1e-12
        bobs = {r.name for r in bob._local_rpc.ListRegions(lpb.ListRegionsRequest(), **bob._kw()).regions}
        all_regions = admin._local_rpc.ListRegions(lpb.ListRegionsRequest(), **admin._kw()).regions
        assert bobs and bobs < {r.name for r in all_regions}
        assert {"bob", "admin"} <= {r.tenant for r in all_regions}
        # Another tenant's region is, to bob, a region that does not exist.
        admins = admin._local.uploads.name
        ref = pb.RegionRef(region=admins, offset=0, length=8 * 5)
        header = pb.MatrixHeader(rows=4, cols=4, nnz=0, value_type=pb.FLOAT64, index_type=pb.INT32)
        request = pb.RegionUploadRequest(header=header, row_offsets=ref, col_indices=pb.RegionRef(region=admins),
                                          values=pb.RegionRef(region=admins))
        with pytest.raises(grpc.RpcError) as e:
            bob._local_rpc.UploadFromRegion(request, **bob._kw())
        assert e.value.code() == grpc.StatusCode.NOT_FOUND and "no region named" in e.value.details()
        # ... and so it is as a product's operand.
        with pytest.raises(grpc.RpcError) as e:
            list(bob._rpc.Multiply(pb.MultiplyRequest(a_region=request), **bob._kw()))
        assert e.value.code() == grpc.StatusCode.NOT_FOUND and "a_region: " in e.value.details()
        with pytest.raises(grpc.RpcError) as e:
            bob._local_rpc.UnregisterRegion(lpb.UnregisterRegionRequest(name=admins), **bob._kw())
        assert e.value.code() == grpc.StatusCode.NOT_FOUND
        assert admins in {r.name for r in admin._local_rpc.ListRegions(lpb.ListRegionsRequest(), **admin._kw()).regions}
