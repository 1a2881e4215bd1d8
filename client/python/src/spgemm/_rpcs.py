"""Callables for every method of a service of the contract, built from the generated descriptors."""

from __future__ import annotations

from typing import Any, Callable

import grpc

from . import _wire
from .v1 import amg_pb2 as apb
from .v1 import graph_pb2 as gpb
from .v1 import local_pb2 as lpb
from .v1 import spgemm_pb2 as pb
from .v1 import values_pb2 as vpb

# The generated module of each proto file, by its name.
_MESSAGE_MODULES = {module.DESCRIPTOR.name: module for module in (pb, lpb, gpb, vpb, apb)}


def _message_class(descriptor: Any) -> Any:
    """The generated class of a message of any proto of the contract."""
    return getattr(_MESSAGE_MODULES[descriptor.file.name], descriptor.name)


class Rpcs:
    """Callables for every method of a service (spgemm.v1.Spgemm, Local or Graph), derived from the generated descriptor.

    Building them from the descriptor (instead of importing the generated
    ``*_pb2_grpc``) keeps the client working with a grpcio runtime older
    than the grpcio-tools that generated the code, and lets Upload and the
    result streams use the zero-copy chunk codec.
    """

    def __init__(self, channel: grpc.Channel, service: Any) -> None:
        for method in service.methods:
            path = "/%s/%s" % (service.full_name, method.name)
            req_cls = _message_class(method.input_type)
            resp_cls = _message_class(method.output_type)
            ser: Callable[[Any], bytes] = req_cls.SerializeToString
            de: Callable[[bytes], Any] = resp_cls.FromString
            if req_cls is pb.UploadPart:
                ser = _wire.serialize_upload_part
            if resp_cls is pb.ResultPart:
                de = _wire.parse_result_part
            factory = {
                (False, False): channel.unary_unary,
                (True, False): channel.stream_unary,
                (False, True): channel.unary_stream,
                (True, True): channel.stream_stream,
            }[(method.client_streaming, method.server_streaming)]
            setattr(self, method.name, factory(path, request_serializer=ser, response_deserializer=de))
