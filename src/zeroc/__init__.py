"""Zeroc: small, fast API payloads — schema-aware serialization, Zstandard and trained dictionaries.

The public surface is this module; everything else is private. See README.md and spec/.
"""

from zeroc._codec import Codec
from zeroc._dictionary import Dictionary, DictionaryStore
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
from zeroc._schema import Schema
from zeroc._session import SessionDecoder, SessionEncoder
from zeroc._train import train

__version__ = "0.1.0"

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
