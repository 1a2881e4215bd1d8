"""Server addresses as spgemmd and the C++ client read them: port 50051 where none is given.

gRPC alone would take 443 for an address without a port.
"""

from __future__ import annotations

import os

DEFAULT_PORT = 50051
DEFAULT_ADDRESS = "localhost:%d" % DEFAULT_PORT
# Addresses that carry no host:port of their own.
_AS_GIVEN = ("unix:", "unix-abstract:", "vsock:", "ipv4:", "ipv6:")


def default_address() -> str:
    """``SPGEMM_SERVER`` when set, else ``localhost:50051``."""
    return os.environ.get("SPGEMM_SERVER") or DEFAULT_ADDRESS


def with_default_port(address: str, port: int = DEFAULT_PORT) -> str:
    """``host`` -> ``host:PORT``, ``[::1]`` and ``::1`` -> ``[::1]:PORT``, ``dns:///host`` -> ``dns:///host:PORT``.

    An address with a port, ``unix:...``, ``unix-abstract:...``, ``vsock:...``
    and the address lists ``ipv4:...`` / ``ipv6:...`` come back as given.
    """
    if not address or address.startswith(_AS_GIVEN):
        return address
    if address.startswith("dns:"):
        at = address.rfind("/") + 1 or len("dns:")  # the host follows the last '/'
        return address[:at] + _host_with_port(address[at:], port)
    return _host_with_port(address, port)


def _host_with_port(host: str, port: int) -> str:
    if host.startswith("["):
        close = host.find("]")
        has_port = close >= 0 and host[close + 1 : close + 2] == ":"
        return host if has_port else "%s:%d" % (host, port)
    colons = host.count(":")
    if colons == 0:
        return "%s:%d" % (host, port)
    if colons == 1:
        return host
    return "[%s]:%d" % (host, port)
