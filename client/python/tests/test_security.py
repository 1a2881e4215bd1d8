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

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm

from conftest import REPO, spgemmd


class Secured(NamedTuple):
    address: str
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
    with spgemmd(tmp_path_factory.mktemp("secured"), *flags) as address:
        yield Secured(address, d, admin, bob)


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
