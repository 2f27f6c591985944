"""Zeroc: small, fast API payloads — schema-aware serialization, Zstandard and trained dictionaries.

The public surface is this module; everything else is private. See README.md and spec/.
"""

from typing import TYPE_CHECKING, Any

from zeroc._errors import (
    ChecksumMismatch,
    DecodeError,
    DictionaryError,
    DictionaryMismatch,
    EncodeError,
    InvalidDictionary,
    LimitExceeded,
    TrainingError,
    TruncatedFrame,
    UnknownDictionary,
    UnsupportedFrame,
    UsageError,
    ZerocError,
)

if TYPE_CHECKING:
    from zeroc._codec import Codec
    from zeroc._dictionary import Dictionary, DictionaryStore
    from zeroc._schema import Schema
    from zeroc._session import SessionDecoder, SessionEncoder
    from zeroc._train import train

__version__ = "0.1.0"

# The codec, protobuf and the learned models load when first named (PEP 562), so that a program
# that needs only an error class or zeroc.tabular does not pay their ~0.1 s of imports.
_LAZY = {
    "Codec": "zeroc._codec",
    "Dictionary": "zeroc._dictionary",
    "DictionaryStore": "zeroc._dictionary",
    "Schema": "zeroc._schema",
    "SessionDecoder": "zeroc._session",
    "SessionEncoder": "zeroc._session",
    "train": "zeroc._train",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'zeroc' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "ChecksumMismatch",
    "Codec",
    "DecodeError",
    "Dictionary",
    "DictionaryError",
    "DictionaryMismatch",
    "DictionaryStore",
    "EncodeError",
    "InvalidDictionary",
    "LimitExceeded",
    "Schema",
    "SessionDecoder",
    "SessionEncoder",
    "TrainingError",
    "TruncatedFrame",
    "UnknownDictionary",
    "UnsupportedFrame",
    "UsageError",
    "ZerocError",
    "__version__",
    "train",
]
