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
            "WebSocket",
            "ZerocMiddleware",
            "ZerocWSGIMiddleware",
            "choose_encoding",
            "parse_accept_encoding",
        ]
    )


def test_learned_exports_are_pinned_and_its_modules_import_only_those_above_them() -> None:
    """zeroc.learned's modules form a chain with no cycle: each imports only modules listed
    before it in the package docstring's order."""
    import ast
    from pathlib import Path

    import zeroc.learned

    assert sorted(zeroc.learned.__all__) == ["LEARNED_SAMPLES", "Model", "breakdown"]
    order = ["_coder", "_nodes", "_format", "_learner", "_native", "_generate", "_walk", "_model"]
    folder = Path(zeroc.learned.__file__).parent
    for module in order:
        if module == "_native":
            continue
        tree = ast.parse((folder / f"{module}.py").read_text())
        imported = {
            alias.name if node.module == "zeroc.learned" else node.module.rsplit(".", 1)[1]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("zeroc.learned")
            for alias in node.names
        }
        assert imported <= set(order[: order.index(module)]), (module, imported)
