"""The approaches compared by ``zeroc bench``: each a dict -> bytes encoder and its decoder.

Every approach starts from the same Python dict and must give it back (conversion included).
Protobuf approaches all use Zeroc's generated converters, the fastest dict <-> message path
measured here, so they differ only in what happens to the bytes.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
import zstandard as zstd

import zeroc

ORIGINAL_DICT_SIZE = 100 * 1024  # the original Zeroc method's dictionary
DICT_SIZE = 32 * 1024


@dataclass(frozen=True)
class Approach:
    name: str
    description: str
    encode: Callable[[Any], bytes]
    decode: Callable[[bytes], Any]


def _compact(m: Any) -> bytes:
    return json.dumps(m, separators=(",", ":")).encode()


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, 6, mtime=0)


DESCRIPTIONS = {
    "json": "json.dumps (compact) / json.loads",
    "json+gzip": "json.dumps + gzip level 6 (gzip format, 18-byte header, as HTTP sends it)",
    "json+brotli": "json.dumps + brotli quality 5",
    "json+zstd": "json.dumps + zstd level 3, no dictionary, standard frame",
    "msgpack+gzip": "msgpack.packb + gzip level 6",
    "cbor": "cbor2.dumps / cbor2.loads",
    "protobuf": "protobuf binary, no compression",
    "protobuf+gzip": "protobuf + gzip level 6",
    "protobuf+zstd-dict-default-frame": (
        "the original Zeroc method: protobuf + zstd level 3 with a 100 KB trained dictionary, "
        "zstd's default frame (magic, dictionary id, content size)"
    ),
    "orjson+zstd-dict": "orjson + zstd level 3 with a 32 KB trained dictionary, default frame",
    "zeroc": "zeroc.train(samples, schema=...) with its defaults, then zeroc.Codec(dictionary)",
    "zeroc-learned": (
        "zeroc.train(samples, schema=..., candidates=[('learned', 19)]): the learned field model "
        "(spec/LEARNED_MODEL.md), then zeroc.Codec(dictionary, frame_id='bare'): the model's "
        "payload without the 1-byte frame tag (the context fixes dictionary and codec)"
    ),
}


Pair = tuple[Callable[[Any], bytes], Callable[[bytes], Any]]
SCHEMALESS = ("json", "json+gzip", "json+brotli", "json+zstd", "msgpack+gzip", "cbor")  # schemaless()'s


def schemaless() -> dict[str, Pair]:
    """The formats APIs use today without a schema or a dictionary: JSON alone and with gzip,
    brotli or zstd, MessagePack + gzip, CBOR (shared with the real-traffic section)."""
    import brotli
    import cbor2
    import msgpack

    plain_zc, plain_zd = zstd.ZstdCompressor(level=3), zstd.ZstdDecompressor()
    packb, unpackb = msgpack.packb, msgpack.unpackb
    loads = json.loads
    return {
        "json": (_compact, loads),
        "json+gzip": (lambda m: _gzip(_compact(m)), lambda b: loads(gzip.decompress(b))),
        "json+brotli": (
            lambda m: brotli.compress(_compact(m), quality=5),
            lambda b: loads(brotli.decompress(b)),
        ),
        "json+zstd": (lambda m: plain_zc.compress(_compact(m)), lambda b: loads(plain_zd.decompress(b))),
        "msgpack+gzip": (lambda m: _gzip(packb(m)), lambda b: unpackb(gzip.decompress(b))),
        "cbor": (cbor2.dumps, cbor2.loads),
    }


def build(train: list[Any], message_class: type) -> list[Approach]:
    """All approaches, trained on ``train`` where they use a dictionary."""
    schema = zeroc.Schema(message_class)
    pb_dumps, pb_loads = schema.dumps, schema.loads
    pb_dict = zstd.train_dictionary(ORIGINAL_DICT_SIZE, [pb_dumps(m) for m in train])
    pb_dict.precompute_compress(level=3)
    pb_zc, pb_zd = zstd.ZstdCompressor(level=3, dict_data=pb_dict), zstd.ZstdDecompressor(dict_data=pb_dict)
    oj_dict = zstd.train_dictionary(DICT_SIZE, [orjson.dumps(m) for m in train])
    oj_dict.precompute_compress(level=3)
    oj_zc, oj_zd = zstd.ZstdCompressor(level=3, dict_data=oj_dict), zstd.ZstdDecompressor(dict_data=oj_dict)
    codec = zeroc.Codec(zeroc.train(train, schema=message_class))
    learned = zeroc.Codec(
        zeroc.train(train, schema=message_class, candidates=[("learned", 19)]), frame_id="bare"
    )
    fns: dict[str, Pair] = {
        **schemaless(),
        "protobuf": (pb_dumps, pb_loads),
        "protobuf+gzip": (lambda m: _gzip(pb_dumps(m)), lambda b: pb_loads(gzip.decompress(b))),
        "protobuf+zstd-dict-default-frame": (
            lambda m: pb_zc.compress(pb_dumps(m)),
            lambda b: pb_loads(pb_zd.decompress(b)),
        ),
        "orjson+zstd-dict": (
            lambda m: oj_zc.compress(orjson.dumps(m)),
            lambda b: orjson.loads(oj_zd.decompress(b)),
        ),
        "zeroc": (codec.encode, codec.decode),
        "zeroc-learned": (learned.encode, learned.decode),
    }
    return [Approach(name, DESCRIPTIONS[name], enc, dec) for name, (enc, dec) in fns.items()]
