"""Trained dictionaries and their file format (spec/DICTIONARY_FORMAT.md)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from zeroc._errors import InvalidDictionary, UnknownDictionary
from zeroc._frame import short_id

MAGIC = b"ZRCD"
VERSION = 1
VERSION_MODEL = 2  # a file that also holds a learned model section
MAX_METADATA = 16 * 1024 * 1024
MAX_CONTENT = 16 * 1024 * 1024
MAX_MODEL = 64 * 1024 * 1024
SERIALIZATIONS = ("json", "protobuf", "bytes")
METHODS = ("zstd", "deflate", "learned")


@dataclass(frozen=True)
class Dictionary:
    """A trained dictionary: its bytes, identity, schema, chosen codec and training figures,
    and optionally a learned model (``model``: the model section, spec/LEARNED_MODEL.md)."""

    content: bytes
    serialization: str = "json"
    codec: dict[str, Any] = field(default_factory=lambda: {"method": "zstd", "level": 3})
    schema: dict[str, str] | None = None
    preference: str = "balanced"
    created: str = ""
    samples: int = 0
    validation: dict[str, Any] = field(default_factory=dict)
    zeroc_version: str = ""
    model: bytes | None = None

    # Hashes are computed once (a frozen dataclass's fields never change): the HTTP layer reads
    # them on every response, and a 32 KB SHA-256 costs ~15 µs.
    @cached_property
    def sha256(self) -> bytes:
        """SHA-256 of the dictionary bytes alone (what RFC 9842 ``dcz`` names)."""
        return hashlib.sha256(self.content).digest()

    @cached_property
    def digest(self) -> bytes:
        """The identity frames, streams and stores use: the content's SHA-256, or with a model,
        the SHA-256 of both hashes (so that a frame names the model it was coded with)."""
        if self.model is None:
            return self.sha256
        return hashlib.sha256(self.sha256 + hashlib.sha256(self.model).digest()).digest()

    @cached_property
    def id(self) -> str:
        """Hex identity (see :attr:`digest`)."""
        return self.digest.hex()

    @property
    def short_id(self) -> int:
        return short_id(self.digest)

    @property
    def bytes_per_message(self) -> float | None:
        """Mean frame size of the chosen codec on the held-back split."""
        for c in self.validation.get("candidates", []):
            if c["method"] == self.codec["method"] and c["level"] == self.codec["level"]:
                return float(c["bytes_per_message"])
        return None

    def metadata(self) -> dict[str, Any]:
        extra = {} if self.model is None else {"content_sha256": self.sha256.hex()}
        return {
            **extra,
            "format": VERSION if self.model is None else VERSION_MODEL,
            "sha256": self.id,
            "short_id": self.short_id,
            "serialization": self.serialization,
            "schema": self.schema,
            "codec": self.codec,
            "preference": self.preference,
            "created": self.created,
            "samples": self.samples,
            "validation": self.validation,
            "zeroc_version": self.zeroc_version,
        }

    # -- file format ---------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        meta = json.dumps(self.metadata(), separators=(",", ":"), sort_keys=True).encode()
        body = (
            MAGIC
            + bytes([VERSION if self.model is None else VERSION_MODEL, 0, 0, 0])
            + len(meta).to_bytes(4, "little")
            + meta
            + len(self.content).to_bytes(4, "little")
            + self.content
        )
        if self.model is not None:
            body += len(self.model).to_bytes(4, "little") + self.model
        return body + hashlib.sha256(body).digest()

    @classmethod
    def from_bytes(cls, data: bytes) -> Dictionary:
        if len(data) < 12 + 4 + 32 or data[:4] != MAGIC:
            raise InvalidDictionary("not a Zeroc dictionary file (bad magic or too short)")
        if data[4] not in (VERSION, VERSION_MODEL):
            raise InvalidDictionary(f"dictionary format version {data[4]} is not supported")
        if data[5:8] != b"\0\0\0":
            raise InvalidDictionary("dictionary file has non-zero reserved bytes")
        m = int.from_bytes(data[8:12], "little")
        if m > MAX_METADATA or 12 + m + 4 + 32 > len(data):
            raise InvalidDictionary(f"metadata length {m} runs past the end of the file")
        c = int.from_bytes(data[12 + m : 16 + m], "little")
        end = 16 + m + c
        if not 0 < c <= MAX_CONTENT or end + 32 > len(data):
            raise InvalidDictionary(f"content length {c} is invalid for a {len(data)}-byte file")
        content_end, model = end, None
        if data[4] == VERSION_MODEL:
            if end + 4 + 32 > len(data):
                raise InvalidDictionary("version 2 dictionary file ends before its model section")
            size = int.from_bytes(data[end : end + 4], "little")
            if not 0 < size <= MAX_MODEL or end + 4 + size + 32 > len(data):
                raise InvalidDictionary(f"model section length {size} is invalid for a {len(data)}-byte file")
            model = bytes(data[end + 4 : end + 4 + size])
            end += 4 + size
        if end + 32 != len(data):
            raise InvalidDictionary(f"{len(data) - end - 32} unexpected bytes at the end of the file")
        if hashlib.sha256(data[:end]).digest() != data[end:]:
            raise InvalidDictionary("dictionary file fails its SHA-256 check (corrupt or truncated)")
        try:
            meta = json.loads(data[12 : 12 + m])
        except (ValueError, RecursionError) as exc:
            raise InvalidDictionary(f"dictionary metadata is not JSON: {exc}") from exc
        return cls._from_metadata(meta, bytes(data[16 + m : content_end]), model)

    @classmethod
    def _from_metadata(cls, meta: Any, content: bytes, model: bytes | None = None) -> Dictionary:
        if not isinstance(meta, dict):
            raise InvalidDictionary("dictionary metadata is not a JSON object")
        want = {
            "sha256": str,
            "serialization": str,
            "codec": dict,
            "preference": str,
            "created": str,
            "samples": int,
            "validation": dict,
            "zeroc_version": str,
        }
        for key, typ in want.items():
            if not isinstance(meta.get(key), typ):
                raise InvalidDictionary(f"dictionary metadata lacks {key!r} of type {typ.__name__}")
        codec = meta["codec"]
        if codec.get("method") not in METHODS or not isinstance(codec.get("level"), int):
            raise InvalidDictionary(f"dictionary codec {codec!r} is not supported")
        if (codec["method"] == "learned") != (model is not None):
            raise InvalidDictionary(
                "a learned codec needs a model section, and a model section a learned codec"
            )
        if meta["serialization"] not in SERIALIZATIONS:
            raise InvalidDictionary(f"serialization {meta['serialization']!r} is not supported")
        schema = meta.get("schema")
        if meta["serialization"] == "protobuf":
            if not (
                isinstance(schema, dict)
                and all(isinstance(schema.get(k), str) for k in ("message", "descriptor_set", "fingerprint"))
            ):
                raise InvalidDictionary("protobuf dictionary lacks its schema")
            try:
                fds = base64.b64decode(schema["descriptor_set"], validate=True)
            except (binascii.Error, ValueError) as exc:
                raise InvalidDictionary(f"schema descriptor set is not base64: {exc}") from exc
            if hashlib.sha256(fds).hexdigest() != schema["fingerprint"]:
                raise InvalidDictionary("schema descriptor set does not match its fingerprint")
        elif schema is not None:
            raise InvalidDictionary(f"a {meta['serialization']} dictionary has no schema")
        d = cls(
            content=content,
            serialization=meta["serialization"],
            codec={"method": codec["method"], "level": codec["level"]},
            schema=schema,
            preference=meta["preference"],
            created=meta["created"],
            samples=meta["samples"],
            validation=meta["validation"],
            zeroc_version=meta["zeroc_version"],
            model=model,
        )
        if d.id != meta["sha256"]:
            raise InvalidDictionary("dictionary content does not match its SHA-256")
        if model is not None:
            from zeroc.learned import Model

            Model.from_bytes(model)  # every table checked now: a hostile model fails to load
        return d

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the dictionary file atomically (temp file + rename)."""
        path = Path(path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(self.to_bytes())
        os.replace(tmp, path)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Dictionary:
        """Read and verify a dictionary file."""
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise InvalidDictionary(f"cannot read dictionary {path}: {exc.strerror}") from exc
        return cls.from_bytes(data)


class DictionaryStore:
    """Dictionaries kept in a local directory as ``<sha256>.zcd``, found by id, hash or short id."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._cache: dict[str, Dictionary] = {}

    def add(self, dictionary: Dictionary) -> Path:
        return dictionary.save(self.directory / f"{dictionary.id}.zcd")

    def ids(self) -> list[str]:
        return sorted(p.stem for p in self.directory.glob("*.zcd") if len(p.stem) == 64)

    def __len__(self) -> int:
        return len(self.ids())

    def __iter__(self):  # type: ignore[no-untyped-def]
        return (self.get(i) for i in self.ids())

    def get(self, key: str | bytes | int) -> Dictionary:
        """Find by hex id (or a unique prefix of it), SHA-256 bytes, or 16-bit short id."""
        if isinstance(key, bytes):
            key = key.hex()
        if isinstance(key, int):
            matches = [i for i in self.ids() if short_id(bytes.fromhex(i)) == key]
            label = f"short id {key}"
        else:
            matches = [i for i in self.ids() if i.startswith(key.lower())] if key else []
            label = f"id {key!r}"
        if not matches:
            raise UnknownDictionary(f"no dictionary with {label} in {self.directory}")
        if len(matches) > 1:
            raise UnknownDictionary(f"{label} is ambiguous in {self.directory}: {len(matches)} match")
        ident = matches[0]
        if ident not in self._cache:
            d = Dictionary.load(self.directory / f"{ident}.zcd")
            if d.id != ident:
                raise UnknownDictionary(f"{ident}.zcd holds dictionary {d.id}")
            self._cache[ident] = d
        return self._cache[ident]
