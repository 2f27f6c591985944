"""Large JSON documents and tables as columns (``zeroc.tabular``; needs the ``tabular`` extra)."""

from zeroc.tabular._table import decode_block, encode_block

__all__ = ["decode_block", "encode_block"]
