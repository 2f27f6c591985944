"""Large JSON documents and tables as columns in a seekable container (``zeroc.tabular``).

Needs the ``tabular`` extra (numpy, pcodec, ijson, cbor2; pyarrow for :func:`to_arrow`). Formats
in spec/TABULAR_FORMAT.md; Packed CBOR (draft-ietf-cbor-packed) as an import and export format.
"""

from zeroc.tabular._cborpacked import pack as pack_cbor
from zeroc.tabular._cborpacked import unpack as unpack_cbor
from zeroc.tabular._container import (
    ContainerReader,
    ContainerWriter,
    append,
    open_container,
    pack,
    pack_file,
    pack_messages,
    read_document,
    table_path,
    unpack,
)
from zeroc.tabular._table import decode_block, encode_block

__all__ = [
    "ContainerReader",
    "ContainerWriter",
    "append",
    "decode_block",
    "encode_block",
    "open_container",
    "pack",
    "pack_cbor",
    "pack_file",
    "pack_messages",
    "read_document",
    "table_path",
    "unpack",
    "unpack_cbor",
]
