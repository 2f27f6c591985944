"""Protobuf schemas: JSON-faithful dict <-> message conversion, presence, enums and errors."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_json import same
from zeroc import Codec, DecodeError, EncodeError, Schema, UsageError
from zeroc.workloads import WORKLOADS, Order, ProductView, SearchRequest, generate

ORDER = Schema(Order)


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_generated_messages_round_trip_exactly(workload: str) -> None:
    schema = Schema(WORKLOADS[workload][1])
    for msg in generate(workload, 300):
        assert same(schema.loads(schema.dumps(msg)), msg)


def test_matches_protobuf_serialization() -> None:
    from google.protobuf import json_format

    for msg in generate("order", 50):
        assert ORDER.dumps(msg) == json_format.ParseDict(msg, Order()).SerializeToString()


def test_defaults_that_were_present_stay_present() -> None:
    msg = {"user_id": 0, "query": "", "timestamp": 0, "page": 0, "limit": 0, "filters": []}
    data = Schema(SearchRequest).dumps(msg)
    assert data == b""  # proto3 writes nothing, and nothing is needed to restore it
    assert same(Schema(SearchRequest).loads(data), msg)


@settings(max_examples=300)
@given(st.data())
def test_any_subset_of_fields_round_trips(data: st.DataObject) -> None:
    base = generate("order", 1, seed=data.draw(st.integers(0, 10_000)))[0]
    keep = data.draw(st.lists(st.sampled_from(sorted(base)), unique=True))
    msg = {k: base[k] for k in base if k in keep}
    for item in msg.get("items", []):
        for k in data.draw(st.lists(st.sampled_from(["product_id", "quantity", "price"]), unique=True)):
            item.pop(k)
    if "shipping_address" in msg:
        for k in data.draw(st.lists(st.sampled_from(sorted(msg["shipping_address"])), unique=True)):
            msg["shipping_address"].pop(k)
    assert ORDER.loads(ORDER.dumps(msg)) == msg


def test_messages_in_and_out() -> None:
    pv = ProductView(user_id=5, product_id=9, device_type="TABLET")
    data = Schema(ProductView).dumps(pv)
    assert Schema(ProductView).loads_message(data) == pv
    with pytest.raises(EncodeError):
        Schema(ProductView).dumps(Order())


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"bogus": 1}, "bogus"),
        ({"user_id": "12"}, "user_id"),
        ({"user_id": 2**70}, "user_id"),
        ({"user_id": True}, "user_id"),
        ({"user_id": None}, "user_id"),
        ({"payment_method": "CASH"}, "payment_method"),
        ({"payment_method": 2}, "payment_method"),
        ({"items": "abc"}, "items"),
        ({"items": [{"quantity": 1.5}]}, "quantity"),
        ({"shipping_address": {"city": 7}}, "city"),
        ({"shipping_address": [1]}, "Address"),
        ({"order_id": b"x"}, "order_id"),
    ],
)
def test_unrepresentable_values_name_the_field(value: dict[str, object], field: str) -> None:
    with pytest.raises(EncodeError, match=field):
        ORDER.dumps(value)


def test_float32_fields_come_back_as_sent() -> None:
    from google.protobuf import descriptor_pb2

    fdp = descriptor_pb2.FileDescriptorProto(name="f32.proto", package="t", syntax="proto3")
    m = fdp.message_type.add(name="M")
    m.field.add(
        name="x",
        number=1,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_FLOAT,
        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
    )
    m.field.add(
        name="tags",
        number=2,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
        label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED,
    )
    e = m.field.add(
        name="attrs",
        number=3,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
        label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED,
        type_name=".t.M.AttrsEntry",
    )
    entry = m.nested_type.add(name="AttrsEntry")
    entry.options.map_entry = True
    entry.field.add(
        name="key",
        number=1,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
    )
    entry.field.add(
        name="value",
        number=2,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
        type_name=".t.M",
    )
    assert e.type_name
    fds = descriptor_pb2.FileDescriptorSet(file=[fdp]).SerializeToString()
    schema = Schema.from_descriptor_set(fds, "M")
    value = {"x": 0.1, "tags": ["a"], "attrs": {"k": {"x": 2.5, "tags": [], "attrs": {}}, "j": {"x": 1.0}}}
    back = schema.loads(schema.dumps(value))
    assert back == value and same(back["x"], 0.1)


def test_schema_loading_errors() -> None:
    with pytest.raises(UsageError):
        Schema.load("no_colon")
    with pytest.raises(UsageError):
        Schema.load("zeroc.workloads:Nope")
    with pytest.raises(UsageError):
        Schema(dict)  # type: ignore[arg-type]
    assert Schema.load("zeroc.workloads:Order").full_name == "zeroc.workloads.Order"


def test_from_proto_compiles_at_run_time() -> None:
    from pathlib import Path

    import zeroc.workloads

    path = Path(zeroc.workloads.__file__).parent / "workloads.proto"
    schema = Schema.from_proto(path, "SearchRequest")
    msg = generate("search_request", 1)[0]
    assert schema.loads(Schema(SearchRequest).dumps(msg)) == msg
    codec = Codec(schema=f"{path}:SearchRequest")
    assert codec.schema is not None and codec.decode(codec.encode(msg)) == msg


def test_garbage_payloads_are_decode_errors() -> None:
    for data in (b"\xff\xff\xff", b"\x0a\x05ab", b"\xc2\xa3\x09\x05\x01", b"\xc2\xa3\x09\x02\x00"):
        with pytest.raises(DecodeError):
            ORDER.loads(data)
