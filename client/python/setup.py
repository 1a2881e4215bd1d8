"""Build hook for the spgemm client.

The protobuf and gRPC modules (``spgemm.v1.spgemm_pb2`` and the same for
``local``, ``graph``, ``values`` and ``amg``, with their ``_grpc`` modules) are
generated from the wire contract ``proto/spgemm/v1/*.proto`` with grpcio-tools
whenever the package is built; they are never committed or edited by hand.

The protos are looked for in the repository (``../../proto`` from this file)
and, for builds from an sdist, in ``./proto`` (the sdist hook below copies it
there). The runtime protobuf requirement is derived from the generated code so
that the installed runtime is never older than the gencode.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))
# Every proto of the contract: the Spgemm service, Local (shared memory and
# CUDA IPC for clients on the server's host), Graph, Values and Amg (they
# import spgemm.proto).
PROTO_NAMES = ("spgemm", "local", "graph", "values", "amg")
PROTO_RELS = [os.path.join("spgemm", "v1", name + ".proto") for name in PROTO_NAMES]
PROTO_REL = PROTO_RELS[0]
PROTO_ROOTS = [
    os.path.normpath(os.path.join(HERE, "..", "..", "proto")),  # source tree
    os.path.join(HERE, "proto"),  # sdist copy
]


def proto_root() -> str:
    """The directory holding spgemm/v1/spgemm.proto."""
    for root in PROTO_ROOTS:
        if os.path.isfile(os.path.join(root, PROTO_REL)):
            return root
    raise RuntimeError(
        "spgemm: cannot find %s under any of %s" % (PROTO_REL, ", ".join(PROTO_ROOTS))
    )


def generate(out_dir: str) -> None:
    """Run grpcio-tools' protoc: writes out_dir/spgemm/v1/NAME_pb2{,_grpc}.py(i) for every proto."""
    try:
        import grpc_tools
        from grpc_tools import protoc
    except ImportError as e:  # pragma: no cover - build-system.requires has it
        raise RuntimeError("spgemm: building needs grpcio-tools (pip install grpcio-tools)") from e
    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    root = proto_root()
    os.makedirs(out_dir, exist_ok=True)
    args = [
        "grpc_tools.protoc",
        "-I" + root,
        "-I" + well_known,
        "--python_out=" + out_dir,
        "--pyi_out=" + out_dir,
        "--grpc_python_out=" + out_dir,
    ] + [os.path.join(root, rel) for rel in PROTO_RELS]
    if protoc.main(args) != 0:
        raise RuntimeError("spgemm: protoc failed on the protos under " + root)
    # spgemm/v1 becomes a subpackage of our own `spgemm` package; the generated
    # gRPC module imports it as `from spgemm.v1 import spgemm_pb2`.
    init = os.path.join(out_dir, "spgemm", "v1", "__init__.py")
    with open(init, "w") as f:
        f.write('"""Generated from proto/spgemm/v1/*.proto at build time; do not edit."""\n')


def protobuf_requirement() -> str:
    """'protobuf>=X.Y.Z' where X.Y.Z is the gencode version protoc stamps into its output."""
    floor = "3.20"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            generate(tmp)
            with open(os.path.join(tmp, "spgemm", "v1", "spgemm_pb2.py")) as f:
                text = f.read()
        m = re.search(
            r"ValidateProtobufRuntimeVersion\(\s*[\w.]+,\s*(\d+),\s*(\d+),\s*(\d+),\s*'([^']*)'",
            text,
        )
        if m:
            floor = "%s.%s.%s%s" % m.groups()
    except Exception as e:  # metadata-only runs without grpcio-tools
        print("spgemm: protobuf floor defaults to %s (%s)" % (floor, e), file=sys.stderr)
    return "protobuf>=" + floor


class BuildPyWithStubs(build_py):
    """build_py that also generates the protobuf/gRPC modules into the build tree."""

    def run(self) -> None:
        super().run()
        if not self.dry_run:
            generate(self.build_lib)
            if getattr(self, "editable_mode", False):
                generate(os.path.join(HERE, "src"))

    def get_outputs(self, include_bytecode: bool = True) -> list:
        outs = list(super().get_outputs(include_bytecode))
        base = os.path.join(self.build_lib, "spgemm", "v1")
        outs.append(os.path.join(base, "__init__.py"))
        for proto in PROTO_NAMES:
            for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py"):
                outs.append(os.path.join(base, proto + suffix))
        return outs


class SdistWithProto(sdist):
    """sdist that carries a copy of the protos, since they live outside this directory."""

    def make_release_tree(self, base_dir: str, files: list) -> None:
        super().make_release_tree(base_dir, files)
        for rel in PROTO_RELS:
            dest = os.path.join(base_dir, "proto", rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(os.path.join(proto_root(), rel), dest)


setup(
    install_requires=[
        "grpcio>=1.50",
        protobuf_requirement(),
        "numpy>=1.22",
        "scipy>=1.8",
        "tqdm>=4.61",
    ],
    cmdclass={"build_py": BuildPyWithStubs, "sdist": SdistWithProto},
)
