"""Large JSON documents and tables as columns in a seekable container (``zeroc.tabular``).

Needs the ``tabular`` extra (numpy, pcodec, ijson; pyarrow for :func:`to_arrow`). Formats in
spec/TABULAR_FORMAT.md.
"""

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
    "pack_file",
    "pack_messages",
    "read_document",
    "table_path",
    "unpack",
]
