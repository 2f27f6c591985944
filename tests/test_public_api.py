import zeroc


def test_exports_are_pinned() -> None:
    assert sorted(zeroc.__all__) == sorted(
        [
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
            "TrainingError",
            "TruncatedFrame",
            "UnknownDictionary",
            "UnsupportedFrame",
            "UsageError",
            "ZerocError",
            "__version__",
            "train",
        ]
    )
    for name in zeroc.__all__:
        assert hasattr(zeroc, name)


def test_error_tree_inherits_builtins_and_statuses() -> None:
    assert issubclass(zeroc.DecodeError, ValueError)
    assert issubclass(zeroc.TruncatedFrame, zeroc.DecodeError) and issubclass(zeroc.TruncatedFrame, EOFError)
    assert issubclass(zeroc.UnknownDictionary, LookupError)
    assert issubclass(zeroc.UsageError, TypeError)
    for cls in (zeroc.EncodeError, zeroc.DecodeError, zeroc.UnknownDictionary, zeroc.DictionaryMismatch):
        assert cls.http_status == 400
    assert zeroc.LimitExceeded.http_status == 413
    errors = [
        getattr(zeroc, n)
        for n in zeroc.__all__
        if n.endswith(("Error", "Frame", "Mismatch", "Dictionary", "Exceeded"))
    ]
    for cls in errors:
        if isinstance(cls, type) and issubclass(cls, Exception):
            assert issubclass(cls, zeroc.ZerocError)


def test_http_exports_are_pinned() -> None:
    import zeroc.http

    assert sorted(zeroc.http.__all__) == sorted(
        [
            "DICTIONARY_PATH",
            "AsyncClient",
            "Client",
            "ContentCodings",
            "Metrics",
            "Reply",
            "Route",
            "StatsdMetrics",
            "ZerocMiddleware",
            "ZerocWSGIMiddleware",
            "choose_encoding",
            "parse_accept_encoding",
        ]
    )
