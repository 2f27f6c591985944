"""Zeroc's one error tree.

Every error Zeroc raises derives from :class:`ZerocError` and says whose fault it is::

    ZerocError
    ├── UsageError (TypeError)            the caller misused the API            -> 500
    ├── EncodeError (ValueError)          the value cannot be encoded           -> 400
    ├── DecodeError (ValueError)          the peer sent a malformed frame       -> 400
    │   ├── TruncatedFrame (EOFError)     ... that ends too early
    │   ├── ChecksumMismatch              ... whose integrity check fails
    │   └── UnsupportedFrame              ... of a version or method this release lacks
    ├── DictionaryError                   dictionaries
    │   ├── UnknownDictionary (LookupError)  a frame names a dictionary we don't hold -> 400
    │   ├── DictionaryMismatch            a frame names another dictionary than ours  -> 400
    │   └── InvalidDictionary (ValueError)   a dictionary file fails verification    -> 500
    ├── TrainingError (ValueError)        samples too few or too small to train on
    └── LimitExceeded (ValueError)        decoding would pass a configured limit   -> 413

Library errors (zstandard, zlib, protobuf, json) never escape: they are wrapped with
``raise ... from exc``. ``http_status`` is the status an HTTP adapter should answer with.
"""

from __future__ import annotations


class ZerocError(Exception):
    """Base of every error Zeroc raises."""

    http_status = 500


class UsageError(ZerocError, TypeError):
    """The caller used the API wrongly (a programming error, not bad data)."""


class EncodeError(ZerocError, ValueError):
    """The value cannot be encoded as asked (unknown field, wrong type, out of range)."""

    http_status = 400


class DecodeError(ZerocError, ValueError):
    """The frame is malformed: the sender's fault, never a bug on this side."""

    http_status = 400


class TruncatedFrame(DecodeError, EOFError):
    """The frame or stream ends before its declared content."""


class ChecksumMismatch(DecodeError):
    """The frame's integrity check does not match its decoded content."""


class UnsupportedFrame(DecodeError):
    """The frame uses a format version, method or flag this release does not implement."""


class DictionaryError(ZerocError):
    """A problem with a dictionary rather than with a frame."""


class UnknownDictionary(DictionaryError, LookupError):
    """A frame names a dictionary that is not available here."""

    http_status = 400


class DictionaryMismatch(DictionaryError):
    """A frame names a different dictionary than the one the codec holds."""

    http_status = 400


class InvalidDictionary(DictionaryError, ValueError):
    """A dictionary file is corrupt, truncated, of an unknown version or fails its hash."""


class TrainingError(ZerocError, ValueError):
    """The samples are too few or too small to train a useful dictionary."""


class LimitExceeded(ZerocError, ValueError):
    """Decoding would exceed a configured limit (decoded size, window size)."""

    http_status = 413
