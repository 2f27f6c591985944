"""Protocol Buffers schemas and fast dict <-> message converters.

``json_format.ParseDict`` / ``MessageToDict`` cost 6-15x more than direct field access and turn
int64 into strings (REFERENCE.md), so each message type gets converters built once from its
descriptor: a table of per-field setters and getters walked with plain attribute access.

JSON fidelity: proto3 does not put fields equal to their default on the wire. Decoding reports
every field without explicit presence (so zeros, empty strings and empty lists that were present
come back); the rare value that *omitted* such a field carries a presence record, spec/WIRE_FORMAT.md
section 2, so it comes back without it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError as ProtobufDecodeError
from google.protobuf.message import Message

from zeroc._codegen import generate
from zeroc._errors import DecodeError, EncodeError, UsageError
from zeroc._frame import read_varint, varint

PRESENCE_FIELD = 19000  # reserved by protobuf for implementations: no schema can use it
PRESENCE_TAG = varint((PRESENCE_FIELD << 3) | 2)

_Setter = Callable[[Message, Any], bool | None]
_Getter = Callable[[Any], Any]


class _Ctx:
    """Instance numbering for the presence record (only used when a record exists)."""

    __slots__ = ("absent", "next")

    def __init__(self, absent: dict[int, int]) -> None:
        self.absent = absent
        self.next = 0


class _Type:
    """Converters for one message type; filled after creation so recursive types work."""

    def __init__(self, desc: Descriptor) -> None:
        self.desc = desc
        self.name = desc.full_name
        self.setters: dict[str, _Setter] = {}
        self.implicit: list[str] = []  # fields without explicit presence, by field number
        # (name, implicit bit or 0, has_presence, value getter, child type for presence walk, kind)
        self.fields: list[tuple[str, int, bool, _Getter, _Type | None, str]] = []
        self.n_implicit = 0

    # -- dict -> message -------------------------------------------------------------
    def fill(self, d: Any, msg: Message) -> bool:
        """Set ``msg`` from dict ``d``; return True if some implicit field was absent below."""
        setters = self.setters
        try:
            items = d.items()
        except AttributeError:
            raise EncodeError(f"{self.name}: expected an object, got {type(d).__name__}") from None
        absent = False
        for key, value in items:
            try:
                setter = setters[key]
            except KeyError:
                raise EncodeError(f"{self.name}: unknown field {key!r}") from None
            try:
                if setter(msg, value):
                    absent = True
            except EncodeError:
                raise
            except (TypeError, ValueError, AttributeError, KeyError) as exc:
                raise EncodeError(f"{self.name}.{key}: {exc}") from exc
        if len(d) < len(setters) and not absent:
            absent = any(n not in d for n in self.implicit)
        return absent

    def presence(self, d: dict[str, Any], out: list[int], counter: list[int]) -> None:
        """Append (instance, absent mask) pairs in pre-order, as the decoder numbers them."""
        index = counter[0]
        counter[0] += 1
        mask = 0
        for bit, name in enumerate(self.implicit):
            if name not in d:
                mask |= 1 << bit
        if mask:
            out += (index, mask)
        for name, _bit, _has, _get, child, kind in self.fields:
            if child is None or name not in d:
                continue
            value = d[name]
            if kind == "message":
                child.presence(value, out, counter)
            elif kind == "repeated":
                for item in value:
                    child.presence(item, out, counter)
            elif kind == "map":
                for key in sorted(value):
                    child.presence(value[key], out, counter)

    # -- message -> dict -------------------------------------------------------------
    def read(self, msg: Message, ctx: _Ctx) -> dict[str, Any]:
        """Message to dict under a presence record (the generated reader handles the rest)."""
        out: dict[str, Any] = {}
        mask = ctx.absent.get(ctx.next, 0)
        ctx.next += 1
        for name, bit, has, get, child, kind in self.fields:
            if has:
                if not msg.HasField(name):
                    continue
            elif mask & bit:
                continue
            value = getattr(msg, name)
            if child is None:
                out[name] = get(value)
            elif kind == "message":
                out[name] = child.read(value, ctx)
            elif kind == "repeated":
                out[name] = [child.read(item, ctx) for item in value]
            else:
                out[name] = {k: child.read(value[k], ctx) for k in sorted(value)}
        return out


def _float32(value: float) -> float:
    """The shortest decimal that is the same float32: what a JSON client sent (0.1, not 0.100000001)."""
    for digits in range(6, 10):
        candidate = float(f"{value:.{digits}g}")
        if struct.pack("<f", candidate) == struct.pack("<f", value):
            return candidate
    return value


def _message_type(field: FieldDescriptor) -> Any:
    assert field.message_type is not None
    return field.message_type


def _read_map(get: _Getter, m: Any) -> dict[Any, Any]:
    return {k: get(m[k]) for k in sorted(m)}


def _read_list(get: _Getter, r: Any) -> list[Any]:
    return [get(x) for x in r]


def _enum_values(field: FieldDescriptor) -> Any:
    assert field.enum_type is not None
    return field.enum_type


def _scalar_getter(field: FieldDescriptor) -> _Getter | None:
    if field.type == FieldDescriptor.TYPE_FLOAT:
        return _float32
    if field.type == FieldDescriptor.TYPE_ENUM:
        names = {v.number: v.name for v in _enum_values(field).values}
        return lambda number: names.get(number, number)
    return None


def _enum_number(field: FieldDescriptor) -> Callable[[Any], int]:
    numbers = {v.name: v.number for v in _enum_values(field).values}
    label = _enum_values(field).full_name

    def number(name: Any) -> int:
        try:
            return int(numbers[name])
        except (KeyError, TypeError):
            raise ValueError(f"{name!r} is not a name of enum {label}") from None

    return number


def _check_list(value: Any) -> None:
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"expected an array, got {type(value).__name__}")


def _build(desc: Any, cache: dict[str, _Type]) -> _Type:
    if desc.full_name in cache:
        return cache[desc.full_name]
    t = _Type(desc)
    cache[desc.full_name] = t
    identity: _Getter = lambda v: v  # noqa: E731
    for field in sorted(desc.fields, key=lambda f: f.number):
        name = field.name
        is_map = field.message_type is not None and field.message_type.GetOptions().map_entry
        repeated = field.is_repeated
        has = field.has_presence
        bit = 0
        if not has:
            bit = 1 << len(t.implicit)
            t.implicit.append(name)
        child: _Type | None = None
        kind = "scalar"
        getter: _Getter
        setter: _Setter
        if is_map:
            kind = "map"
            value_field = _message_type(field).fields_by_name["value"]
            if value_field.message_type is not None:
                child = _build(value_field.message_type, cache)
                getter = identity
                setter = _map_message_setter(name, child)
            else:
                getter = functools.partial(_read_map, _scalar_getter(value_field) or identity)
                setter = _map_scalar_setter(name, value_field)
        elif field.message_type is not None:
            child = _build(field.message_type, cache)
            getter = identity
            if repeated:
                kind = "repeated"
                setter = _repeated_message_setter(name, child)
            else:
                kind = "message"
                setter = _message_setter(name, child)
        elif repeated:
            sget = _scalar_getter(field)
            getter = functools.partial(_read_list, sget) if sget else list
            setter = _repeated_scalar_setter(name, field)
        else:
            getter = _scalar_getter(field) or identity
            setter = _scalar_setter(name, field)
        t.setters[name] = setter
        t.fields.append((name, bit, has, getter, child, kind))
    t.n_implicit = len(t.implicit)
    return t


def _scalar_setter(name: str, field: FieldDescriptor) -> _Setter:
    if field.type == FieldDescriptor.TYPE_ENUM:
        number = _enum_number(field)
        return lambda msg, v: setattr(msg, name, number(v))
    if field.type == FieldDescriptor.TYPE_STRING:

        def set_string(msg: Message, v: Any) -> None:
            if not isinstance(v, str):
                raise TypeError(f"expected a string, got {type(v).__name__}")
            setattr(msg, name, v)

        return set_string
    return lambda msg, v: setattr(msg, name, v)


def _repeated_scalar_setter(name: str, field: FieldDescriptor) -> _Setter:
    number = _enum_number(field) if field.type == FieldDescriptor.TYPE_ENUM else None
    is_string = field.type == FieldDescriptor.TYPE_STRING

    def set_repeated(msg: Message, v: Any) -> None:
        _check_list(v)
        if number is not None:
            v = [number(x) for x in v]
        elif is_string and not all(isinstance(x, str) for x in v):
            raise TypeError("expected an array of strings")
        getattr(msg, name).extend(v)

    return set_repeated


def _message_setter(name: str, child: _Type) -> Callable[[Message, Any], bool]:
    def set_message(msg: Message, v: Any) -> bool:
        sub = getattr(msg, name)
        sub.SetInParent()
        return child.fill(v, sub)

    return set_message


def _repeated_message_setter(name: str, child: _Type) -> Callable[[Message, Any], bool]:
    def set_repeated(msg: Message, v: Any) -> bool:
        _check_list(v)
        rep = getattr(msg, name)
        absent = False
        for item in v:
            if child.fill(item, rep.add()):
                absent = True
        return absent

    return set_repeated


def _map_scalar_setter(name: str, value_field: FieldDescriptor) -> _Setter:
    number = _enum_number(value_field) if value_field.type == FieldDescriptor.TYPE_ENUM else None

    def set_map(msg: Message, v: Any) -> None:
        if not isinstance(v, dict):
            raise TypeError(f"expected an object, got {type(v).__name__}")
        getattr(msg, name).update({k: number(x) for k, x in v.items()} if number else v)

    return set_map


def _map_message_setter(name: str, child: _Type) -> Callable[[Message, Any], bool]:
    def set_map(msg: Message, v: Any) -> bool:
        if not isinstance(v, dict):
            raise TypeError(f"expected an object, got {type(v).__name__}")
        m = getattr(msg, name)
        absent = False
        for key, item in v.items():
            if child.fill(item, m[key]):
                absent = True
        return absent

    return set_map


class Schema:
    """A protobuf message type with converters built once from its descriptor.

    Create it from a generated message class, ``Schema.load("package.module:Message")``,
    ``Schema.from_proto(path, "Message")`` (compiles at run time; needs ``zeroc[proto]``), or
    from the descriptor set a dictionary carries.
    """

    def __init__(self, message_class: type[Message]) -> None:
        if not (isinstance(message_class, type) and issubclass(message_class, Message)):
            raise UsageError(f"schema must be a protobuf message class, got {message_class!r}")
        self.message_class = message_class
        self.descriptor: Any = message_class.DESCRIPTOR
        self.full_name: str = self.descriptor.full_name
        types: dict[str, _Type] = {}
        self._type = _build(self.descriptor, types)
        self.dumps: Callable[[Any], bytes]
        self.loads: Callable[[bytes], dict[str, Any]]
        # to_dict: a message to the JSON value it stands for (every field without presence
        # included, as decoding a frame without a presence record gives).
        self.to_dict: Callable[[Message], dict[str, Any]]
        self.dumps, self.loads, self.to_dict = generate(
            self._type,
            types,
            message_class,
            _float32,
            self._dumps_slow,
            self._loads_slow,
            PRESENCE_TAG,
            DecodeError,
        )

    # -- construction ------------------------------------------------------------------
    @classmethod
    def load(cls, spec: str) -> Schema:
        """``"module:Message"`` — import a generated ``_pb2`` module and take the class."""
        module_name, _, attr = spec.partition(":")
        if not module_name or not attr:
            raise UsageError(f"schema {spec!r} is not of the form 'module:Message'")
        try:
            obj: Any = importlib.import_module(module_name)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise UsageError(f"cannot load schema {spec!r}: {exc}") from exc
        return cls(obj)

    @classmethod
    def from_proto(cls, path: str | Path, message: str) -> Schema:
        """Compile a ``.proto`` file at run time (protoc from grpcio-tools) and take ``message``."""
        try:
            from grpc_tools import protoc
        except ImportError as exc:
            raise UsageError(
                "compiling .proto files needs the 'proto' extra: pip install 'zeroc[proto]'"
            ) from exc
        path = Path(path)
        if not path.is_file():
            raise UsageError(f"no .proto file at {path}")
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "set.pb"
            include = str(Path(protoc.__file__).parent / "_proto")
            rc = protoc.main(
                [
                    "protoc",
                    f"-I{path.parent}",
                    f"-I{include}",
                    "--include_imports",
                    f"--descriptor_set_out={out}",
                    str(path),
                ]
            )
            if rc != 0:
                raise UsageError(f"protoc could not compile {path} (exit {rc})")
            data = out.read_bytes()
        return cls.from_descriptor_set(data, message)

    @classmethod
    def from_descriptor_set(cls, data: bytes, message: str) -> Schema:
        """Build the message class from a serialized ``FileDescriptorSet`` in a private pool."""
        fds = descriptor_pb2.FileDescriptorSet()
        try:
            fds.ParseFromString(data)
            pool = descriptor_pool.DescriptorPool()
            for f in fds.file:
                pool.Add(f)
            names = [message] + [f"{f.package}.{message}" for f in fds.file if f.package]
            for name in names:
                try:
                    desc = pool.FindMessageTypeByName(name)
                    break
                except KeyError:
                    continue
            else:
                raise UsageError(f"message {message!r} is not in the schema")
        except (ProtobufDecodeError, TypeError, ValueError) as exc:
            raise UsageError(f"invalid protobuf descriptor set: {exc}") from exc
        return cls(message_factory.GetMessageClass(desc))

    def descriptor_set(self) -> bytes:
        """The schema's file and its imports as a serialized ``FileDescriptorSet``."""
        fds = descriptor_pb2.FileDescriptorSet()
        seen: set[str] = set()

        def add(fd: Any) -> None:
            if fd.name in seen:
                return
            seen.add(fd.name)
            for dep in fd.dependencies:
                add(dep)
            proto = descriptor_pb2.FileDescriptorProto()
            fd.CopyToProto(proto)
            fds.file.append(proto)

        add(self.descriptor.file)
        return fds.SerializeToString(deterministic=True)

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(self.descriptor_set()).hexdigest()

    # -- conversion ----------------------------------------------------------------------
    def _dumps_slow(self, value: Any) -> bytes:
        """Serialize a message or any dict (``self.dumps`` is the generated fast path)."""
        if isinstance(value, Message):
            if value.DESCRIPTOR.full_name != self.full_name:
                raise EncodeError(f"expected a {self.full_name} message, got {value.DESCRIPTOR.full_name}")
            return value.SerializeToString()
        msg = self.message_class()
        if not self._type.fill(value, msg):
            return msg.SerializeToString()
        pairs: list[int] = []
        self._type.presence(value, pairs, [0])
        record = b"".join(varint(n) for n in pairs)
        return PRESENCE_TAG + varint(len(record)) + record + msg.SerializeToString()

    def _loads_slow(self, data: bytes) -> dict[str, Any]:
        """Parse a payload that carries a presence record (``self.loads`` is the fast path)."""
        msg, ctx = self._parse(data)
        assert ctx is not None
        return self._type.read(msg, ctx)

    def loads_message(self, data: bytes) -> Message:
        return self._parse(data)[0]

    def _parse(self, data: bytes) -> tuple[Message, _Ctx | None]:
        ctx = None
        if data[:3] == PRESENCE_TAG:
            ctx = _Ctx(_read_presence(data))
        msg = self.message_class()
        try:
            msg.ParseFromString(data)
        except (ProtobufDecodeError, RuntimeError, ValueError) as exc:
            raise DecodeError(f"invalid {self.full_name} payload: {exc}") from exc
        return msg, ctx


def _read_presence(data: bytes) -> dict[int, int]:
    length, pos = read_varint(data, 3)
    end = pos + length
    if end > len(data):
        raise DecodeError("presence record runs past the payload")
    absent: dict[int, int] = {}
    while pos < end:
        index, pos = read_varint(data, pos)
        if pos >= end:
            raise DecodeError("presence record ends inside a pair")
        mask, pos = _read_big_varint(data, pos, end)
        absent[index] = mask
    if pos != end:
        raise DecodeError("presence record overruns its length")
    return absent


def _read_big_varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """A mask varint may exceed 5 bytes for messages with many fields; bounded by the record."""
    value = shift = 0
    while pos < end:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
    raise DecodeError("presence record ends inside a varint")


def resolve(schema: Any) -> Schema | None:
    """Accept a Schema, a message class, ``"module:Message"`` or ``"path/api.proto:Message"``."""
    if schema is None or isinstance(schema, Schema):
        return schema
    if isinstance(schema, str):
        path, _, message = schema.rpartition(":")
        if path.endswith(".proto"):
            return Schema.from_proto(path, message)
        return Schema.load(schema)
    return Schema(schema)
