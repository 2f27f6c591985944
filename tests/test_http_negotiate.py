"""The negotiation core as a table of header cases (no server needed)."""

import pytest

from zeroc.http._negotiate import (
    accept_weight,
    add_vary,
    available_dictionary,
    available_dictionary_header,
    choose_encoding,
    is_excluded,
    names_dcz,
    names_zeroc,
    parse_accept_encoding,
    parse_media_type,
    wants_zeroc,
)

A = ("zstd", "br", "gzip")


@pytest.mark.parametrize(
    ("header", "available", "chosen"),
    [
        (None, A, "identity"),
        ("", A, "identity"),
        ("gzip", A, "gzip"),
        ("gzip;q=0", A, "identity"),  # Starlette's substring match would say gzip
        ("GZIP", A, "gzip"),
        ("x-gzip", A, "identity"),
        ("gzip, deflate, br, zstd", A, "zstd"),
        ("gzip;q=0.5, br", A, "br"),
        ("br;q=0.5, gzip;q=0.5", A, "br"),  # tie: server preference
        ("gzip;q=1.0, zstd;q=0.9", A, "gzip"),
        ("*", A, "zstd"),
        ("*", (*A, "dcz"), "dcz"),
        ("*;q=0", A, "identity"),
        ("zstd;q=0, *", A, "br"),
        ("identity;q=0, gzip;q=0", A, "identity"),
        ("gzip;q=abc", A, "identity"),
        ("gzip;q=2", A, "identity"),
        ("dcz, gzip", A, "gzip"),  # dcz only when the client holds the dictionary
        ("dcz, gzip", (*A, "dcz"), "dcz"),
        ("deflate", A, "identity"),
    ],
)
def test_choose_encoding(header: str | None, available: tuple[str, ...], chosen: str) -> None:
    assert choose_encoding(header, available) == chosen


def test_parse_accept_encoding() -> None:
    assert parse_accept_encoding("gzip;q=0.5, BR ,*;q=0") == {"gzip": 0.5, "br": 1.0, "*": 0.0}


@pytest.mark.parametrize(
    ("accept", "wants"),
    [
        (None, False),
        ("application/json", False),
        ("*/*", False),
        ("application/x-zeroc", True),
        ("application/x-zeroc, application/json;q=0.9", True),
        ("application/json, application/x-zeroc;q=0.5", False),
        ("application/x-zeroc;q=0", False),
    ],
)
def test_wants_zeroc(accept: str | None, wants: bool) -> None:
    assert wants_zeroc(accept) is wants


def test_media_types_and_weights() -> None:
    assert parse_media_type('application/x-zeroc; schema="a.B"; dictionary=ab') == (
        "application/x-zeroc",
        {"schema": "a.B", "dictionary": "ab"},
    )
    assert accept_weight("text/*;q=0.3, */*;q=0.1", "text/html") == 0.3
    assert accept_weight("text/html", "application/json") == 0.0


def test_available_dictionary_round_trip() -> None:
    sha = bytes(range(32))
    assert available_dictionary(available_dictionary_header(sha)) == sha
    for bad in (None, "", "abc", ":abc:", ":" + "A" * 44 + ":", ":!!:"):
        assert available_dictionary(bad) is None


@pytest.mark.parametrize(
    ("ctype", "excluded"),
    [
        ("image/png", True),
        ("image/svg+xml", False),
        ("text/event-stream", False),  # compressed as a stream, each event flushed
        ("application/json; charset=utf-8", False),
        ("video/mp4", True),
        ("application/zip", True),
        (None, False),
    ],
)
def test_excluded_types(ctype: str | None, excluded: bool) -> None:
    assert is_excluded(ctype) is excluded


def test_vary() -> None:
    assert add_vary(None, "Accept-Encoding") == "Accept-Encoding"
    assert (
        add_vary("Origin, accept-encoding", "Accept-Encoding", "Accept") == "Origin, accept-encoding, Accept"
    )
    assert add_vary("*", "Accept") == "*"


def test_who_is_named_the_dictionary() -> None:
    """A Zeroc client takes frames at any weight; q=0 refuses them, as it refuses dcz."""
    assert names_zeroc("application/json, application/x-zeroc;q=0.1")
    assert not names_zeroc("application/x-zeroc;q=0, application/json") and not names_zeroc("*/*")
    assert not names_zeroc(None)
    assert names_dcz("gzip, DCZ") and not names_dcz("dcz;q=0, gzip") and not names_dcz(None)
