"""The ``zeroc`` command line: a thin adapter that reads files and calls the core.

click is the CLI library the Python field trusts (used by Flask, pip-tools, black): it gives
argument checking, help and exit codes without hand-written parsing.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from zeroc._defaults import CANDIDATES, DEFAULT_MAX_DECODED_SIZE, MAX_VALUES, PREFERENCES
from zeroc._errors import UsageError, ZerocError

if TYPE_CHECKING:
    from zeroc._codec import Codec
    from zeroc._schema import Schema

# Each command imports what it uses, so that `zeroc rows` does not start by loading the codec,
# protobuf and the learned models (about 0.1 s of a command that reads 100 rows).

CONTAINER_MAGIC = b"ZRCT"  # spec/TABULAR_FORMAT.md §2 (zeroc.tabular is imported only when used)


class _Command(click.Group):
    """Turn every Zeroc or OS error into one line on stderr and exit status 1, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # the reader left (`zeroc rows ... | head`): stop quietly, as cat does
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush
            ctx.exit(141)  # 128 + SIGPIPE, the status a shell gives a writer whose reader left
        except (ZerocError, OSError, ValueError) as exc:
            click.echo(f"zeroc: error: {exc}", err=True)
            ctx.exit(1)
        except RecursionError:  # JSON nested deeper than Python's parsers go
            click.echo("zeroc: error: input is nested too deeply to read", err=True)
            ctx.exit(1)


@click.group(cls=_Command)
@click.version_option(package_name="zeroc")
def main() -> None:
    """Zeroc: small, fast API payloads (schema serialization + zstd + trained dictionaries)."""


# -- helpers ---------------------------------------------------------------------------------
def _read_json(path: Path) -> Iterator[Any]:
    """Samples from a file: NDJSON (one value per line) or one JSON document (an array's items)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".ndjson", ".jsonl"):
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError as exc:
                    raise ValueError(f"{path}:{n}: not JSON: {exc}") from None
        return
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{path}: not JSON: {exc}") from None
    if isinstance(doc, list):
        yield from doc
    else:
        yield doc


def _samples(paths: tuple[str, ...]) -> Iterator[Any]:
    for p in map(Path, paths):
        if p.is_dir():
            for f in sorted(p.glob("*.json")):
                yield from _read_json(f)
        else:
            yield from _read_json(p)


def _schema(schema: str | None, proto: str | None, message: str | None) -> Schema | None:
    from zeroc._schema import Schema

    if schema and proto:
        raise click.UsageError("give either --schema or --proto, not both")
    if proto:
        if not message:
            raise click.UsageError("--proto needs --message NAME")
        return Schema.from_proto(proto, message)
    return Schema.load(schema) if schema else None


def _schema_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--message", help="message name inside --proto")(f)
    f = click.option("--proto", type=click.Path(dir_okay=False), help=".proto file")(f)
    return click.option("--schema", help="protobuf message class as module:Message")(f)


def _progress(stage: str, done: int, total: int) -> None:
    end = "\n" if stage == "done" else ""
    if sys.stderr.isatty():
        click.echo(f"\r\x1b[Ktraining: {stage} ({done}/{total})", err=True, nl=False)
        if end:
            click.echo("", err=True)
    else:  # a log: one line per step
        click.echo(f"training: {stage}" + (f" ({done + 1}/{total})" if total > 1 else ""), err=True)


# -- commands --------------------------------------------------------------------------------
@main.command("train")
@click.argument("samples", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="dictionary file")
@_schema_options
@click.option("--size", default=32 * 1024, show_default=True, help="dictionary size in bytes")
@click.option("--preference", type=click.Choice(PREFERENCES), default="balanced", show_default=True)
@click.option(
    "--only",
    "methods",
    multiple=True,
    type=click.Choice(sorted({m for m, _ in CANDIDATES})),
    help="consider only these codecs (repeatable); e.g. --only learned for the learned field model",
)
@click.option(
    "--max-samples",
    type=click.IntRange(min=8),
    help="train on a uniform sample of this many messages (read in one pass): for huge inputs",
)
def train_cmd(
    samples: tuple[str, ...],
    output: str,
    schema: str | None,
    proto: str | None,
    message: str | None,
    size: int,
    preference: str,
    methods: tuple[str, ...],
    max_samples: int | None,
) -> None:
    """Train a dictionary on SAMPLES (NDJSON, JSON array files or directories of .json)."""
    from zeroc._train import train

    d = train(
        _samples(samples),
        schema=_schema(schema, proto, message),
        size=size,
        preference=preference,
        candidates=[c for c in CANDIDATES if not methods or c[0] in methods],
        progress=_progress,
        max_samples=max_samples,
    )
    d.save(output)
    v = d.validation
    click.echo(
        f"{output}: {len(d.content)}-byte dictionary {d.id[:16]} ({d.serialization}), "
        f"codec {d.codec['method']}-{d.codec['level']}: {d.bytes_per_message:.1f} B/message "
        f"on {v['messages']} held-back messages (serialized {v['serialized_bytes']:.1f}, "
        f"zstd {v['zstd_bytes']:.1f}, gzip {v['gzip_bytes']:.1f})"
    )


def _codec(
    dict_path: str | None,
    schema: Schema | None,
    max_decoded_size: int = DEFAULT_MAX_DECODED_SIZE,
    max_values: int = MAX_VALUES,
    checksum: bool = False,
) -> Codec:
    from zeroc._codec import Codec
    from zeroc._dictionary import Dictionary

    dictionary = Dictionary.load(dict_path) if dict_path else None
    return Codec(
        dictionary, schema, max_decoded_size=max_decoded_size, max_values=max_values, checksum=checksum
    )


@main.command("encode")
@click.argument("input", type=click.Path(dir_okay=False))
@click.option(
    "--dict", "dict_path", type=click.Path(dir_okay=False), help="the .zcd dictionary the frames use"
)
@_schema_options
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False))
@click.option(
    "--checksum/--no-checksum",
    default=True,
    show_default=True,
    help="a CRC-32 in every frame, in a checksummed stream (version 2) that refuses a frame without",
)
@click.option(
    "--session/--frames",
    default=False,
    show_default=True,
    help="--session: each message coded with the ones before it as history (smaller, read in order; "
    "with a learned dictionary, as the model's payloads where those are smaller); "
    "--frames: independent frames, any one decodable alone",
)
def encode_cmd(
    input: str,
    dict_path: str | None,
    schema: str | None,
    proto: str | None,
    message: str | None,
    output: str,
    checksum: bool,
    session: bool,
) -> None:
    """Encode INPUT (NDJSON, or a JSON array) into a Zeroc stream."""
    codec = _codec(dict_path, _schema(schema, proto, message), checksum=checksum)
    values = list(_read_json(Path(input)))
    data = codec.encode_stream(values, session=session)
    Path(output).write_bytes(data)
    raw = Path(input).stat().st_size
    click.echo(f"{output}: {len(values)} messages, {len(data)} bytes ({raw} bytes of input)", err=True)


@main.command("decode")
@click.argument("input", type=click.Path(dir_okay=False))
@click.option(
    "--dict", "dict_path", type=click.Path(dir_okay=False), help="the .zcd dictionary the frames use"
)
@_schema_options
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False))
@click.option(
    "--max-decoded-size",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_DECODED_SIZE,
    show_default=True,
    help="bytes of serialization one message may decode to",
)
@click.option(
    "--max-values",
    type=click.IntRange(min=1),
    default=MAX_VALUES,
    show_default=True,
    help="JSON values and containers one message may build (its commas and opening brackets)",
)
def decode_cmd(
    input: str,
    dict_path: str | None,
    schema: str | None,
    proto: str | None,
    message: str | None,
    output: str,
    max_decoded_size: int,
    max_values: int,
) -> None:
    """Decode a Zeroc frame stream back to NDJSON."""
    from zeroc import _json

    codec = _codec(dict_path, _schema(schema, proto, message), max_decoded_size, max_values)
    values = codec.decode_stream(Path(input).read_bytes())
    with open(output, "wb") as f:
        for v in values:
            f.write(_json.dumps(v) + b"\n")
    click.echo(f"{output}: {len(values)} messages", err=True)


def _describe(data: bytes) -> dict[str, Any]:
    from zeroc import _frame
    from zeroc._dictionary import MAGIC as DICT_MAGIC
    from zeroc._dictionary import Dictionary
    from zeroc.learned import Model

    if not data:
        raise UsageError("the file is empty: not a frame, stream, dictionary or table container")
    if data[:4] == CONTAINER_MAGIC:
        from zeroc.tabular import ContainerReader

        reader = ContainerReader(io.BytesIO(data))
        return {
            "kind": "table container",
            "bytes": len(data),
            "rows": len(reader),
            "chunks": len(reader.footer["chunks"]),
            "path": reader.footer["path"],
            **reader.describe(),
        }
    if data[:4] == DICT_MAGIC:
        d = Dictionary.from_bytes(data)
        meta = d.metadata()
        if meta["schema"]:
            meta["schema"] = {k: v for k, v in meta["schema"].items() if k != "descriptor_set"}
        extra = {}
        if d.model is not None:
            extra = {"model_bytes": len(d.model), "model": Model.from_bytes(d.model).describe()}
        return {"kind": "dictionary", "content_bytes": len(d.content), **extra, **meta}
    if data[:4] == _frame.STREAM_MAGIC:
        sha, frames = _frame.iter_stream(data, max_frame=len(data))
        if _frame.is_session_stream(data):
            heads = [_frame.read_varint(r, 0)[0] for r in frames]
            return {
                "kind": "session stream",
                "bytes": len(data),
                "dictionary": sha.hex() if sha else None,
                "checksummed": data[4] == _frame.STREAM_CHECKSUMMED,
                "records": len(heads),
                "messages": sum(h >> 3 for h in heads),
                "resets": sum(h & 1 for h in heads),
                "learned_records": sum(h >> 1 & 3 == 3 for h in heads),
            }
        methods: dict[str, int] = {}
        sizes = []
        for f in frames:
            h = _frame.parse(f)
            methods[h.method.name.lower()] = methods.get(h.method.name.lower(), 0) + 1
            sizes.append(len(f))
        return {
            "kind": "stream",
            "bytes": len(data),
            "dictionary": sha.hex() if sha else None,
            "checksummed": data[4] == _frame.STREAM_CHECKSUMMED,
            "frames": len(sizes),
            "frame_bytes_mean": round(sum(sizes) / len(sizes), 2) if sizes else 0,
            "methods": methods,
        }
    h = _frame.parse(data)
    return {
        "kind": "frame",
        "bytes": len(data),
        "method": h.method.name.lower(),
        "dictionary_reference": h.ref.name.lower(),
        "dictionary": h.reference.hex() or None,
        "checksum": h.checksum,
        "payload_bytes": len(h.payload),
    }


def _print_fields(model: dict[str, Any] | None) -> None:
    """The learned model's cost by field, measured on the held-back messages at training."""
    if not model:
        return
    click.echo(
        f"  learned model: {model['bits_per_message']:.1f} bits/message on the held-back split, "
        f"{100 * model['common_path']:.1f}% on the common path"
    )
    width = max(len(f["field"]) for f in model["fields"])
    click.echo(f"  {'field'.ljust(width)}  bits/msg  model")
    for f in model["fields"]:
        kind = f["model"] if len(f["model"]) <= 90 else f["model"][:87] + "..."
        click.echo(f"  {f['field'].ljust(width)}  {f['bits']:8.2f}  {kind}")


@main.command("inspect")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
def inspect_cmd(file: str, as_json: bool) -> None:
    """Show what a frame, stream, dictionary or table container file holds (a container: where
    its bytes go, block by block)."""
    info = _describe(Path(file).read_bytes())
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    for key, value in info.items():
        if key == "blocks":
            for b in value:
                what = "skeleton" if b["rows"] is None else f"{b['rows']:,} rows"
                what += " and the rest of the document" if b["document"] else ""
                click.echo(
                    f"  block at {b['offset']:,} ({what}): {b['bytes']:,} B: {b['payload_bytes']:,} B of "
                    f"payloads ({b['brotli_payloads']} brotli) + {b['text_bytes']:,} B of {b['text']} text "
                    f"(head {b['head_bytes']:,} B, pool {b['pool_bytes']:,} B and value stream "
                    f"{b['value_bytes']:,} B before it)"
                )
                click.echo("    encodings: " + ", ".join(f"{k} {n}" for k, n in b["encodings"].items()))
            continue
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items()) if key != "validation" else ""
            if key == "validation":
                for c in info["validation"].get("candidates", []):
                    click.echo(
                        f"  candidate {c['method']}-{c['level']}: {c['bytes_per_message']} B/msg, "
                        f"encode {c['encode_us']} µs, decode {c['decode_us']} µs"
                    )
                _print_fields(info["validation"].get("model"))
                continue
        click.echo(f"{key}: {value}")


@main.command("bench")
@click.argument(
    "suite",
    type=click.Choice(["messages", "traffic", "tabular", "http", "relay", "browser"]),
    default="messages",
)
@click.option(
    "--quick/--full",
    default=False,
    help="messages: 2,000 + 2,000 (quick) or 10,000 + 10,000 generated messages, then the real-traffic "
    "sets (traffic: those alone) with 1,000 + 1,000 (quick) or 4,000 + 4,000 built records; tabular: "
    "1,000 and 20,000 (quick) or 1,000 and 100,000 rows; http: 1,500 (quick) or 6,000 requests per case "
    "(and 100 or 400 counted under callgrind where valgrind is installed); "
    "relay: 2,000 (quick) or 10,000 small messages and two buffer dumps; browser: a time series of "
    "100,000 (quick) or 1,000,000 points",
)
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="write the results as JSON")
@click.option("--markdown", "md_path", type=click.Path(dir_okay=False), help="write a Markdown report")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), help="write a PNG plot")
def bench_cmd(
    suite: str, quick: bool, json_path: str | None, md_path: str | None, plot_path: str | None
) -> None:
    """Compare Zeroc side by side: small API messages and real traffic (default), real traffic
    alone (traffic), large tables (tabular), the HTTP middleware's CPU and instructions per
    request (http), a relay's stream of messages on one connection (relay: sessions,
    permessage-deflate, zlib), or the TypeScript package in headless Chromium (browser: its --plot
    is the page's chart)."""
    try:
        from zeroc import bench
        from zeroc.bench import _browser, _http, _relay, _tabular
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise click.ClickException(f"the benchmark needs the 'bench' extra: {exc}") from exc

    def progress(msg: str) -> None:
        click.echo(f"bench: {msg}", err=True)

    mode = "--quick" if quick else "--full"
    if suite == "tabular":
        result = _tabular.run(sizes=(1_000, 20_000) if quick else (1_000, 100_000), progress=progress)
        click.echo(_tabular.table(result))
        markdown = _tabular.markdown(result, f"zeroc bench tabular {mode} --markdown {md_path}")
        plot = _tabular.plot
    elif suite == "relay":
        result = _relay.run(quick=quick, progress=progress)
        click.echo(_relay.table(result))
        markdown = _relay.markdown(result, f"zeroc bench relay {mode} --markdown {md_path}")
        plot = _relay.plot
    elif suite == "browser":
        result = _browser.run(quick=quick, progress=progress, screenshot=plot_path)
        click.echo(_browser.table(result))
        markdown = _browser.markdown(result, f"zeroc bench browser {mode} --markdown {md_path}")
        plot = None
    elif suite == "http":
        result = _http.run(quick=quick, progress=progress)
        result["instructions"] = _http.instructions(quick=quick, progress=progress)
        click.echo(_http.table(result))
        markdown = _http.markdown(result, f"zeroc bench http {mode} --markdown {md_path}")
        plot = None
    else:
        result = bench.run(quick=quick, progress=progress, workloads_too=suite == "messages")
        click.echo(bench.table(result))
        markdown = bench.markdown(result, f"zeroc bench {mode} --markdown {md_path}")
        plot = bench.plot
    if json_path:
        Path(json_path).write_text(json.dumps(result, indent=1) + "\n")
    if md_path:
        Path(md_path).write_text(markdown)
    if plot_path and suite != "browser":  # the browser suite's plot is the page's screenshot
        if plot is None:
            raise click.ClickException(f"bench {suite} draws no plot")
        plot(result, plot_path)


@main.command("pack")
@click.argument("input", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False))
@click.option(
    "--chunk-rows", default=65_536, show_default=True, help="rows per independently compressed chunk"
)
@click.option(
    "--checksum/--no-checksum",
    default=True,
    show_default=True,
    help="CRC-32 of every chunk and of the footer (container version 2)",
)
@click.option("--portable", is_flag=True, help="no pcodec, no brotli: readable by the browser package (js/)")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["zct", "cbor-packed"]),
    default="zct",
    show_default=True,
    help="a .zct container, or Packed CBOR (draft-ietf-cbor-packed: records and shared items)",
)
def pack_cmd(input: str, output: str, chunk_rows: int, checksum: bool, portable: bool, fmt: str) -> None:
    """Pack a JSON document (a table of rows, or any JSON) or a Packed CBOR file into a seekable
    .zct container, or into Packed CBOR."""
    from zeroc import _json
    from zeroc.tabular import pack, pack_cbor, pack_file, unpack_cbor

    def progress(rows: int) -> None:
        click.echo(f"pack: {rows:,} rows", err=True)

    with open(input, "rb") as src:
        packed_in = _is_packed_cbor(src.read(4))
        src.seek(0)
        if fmt == "cbor-packed" or packed_in:
            doc = unpack_cbor(src.read()) if packed_in else _json.loads(src.read())
    with open(output, "wb") as out:
        if fmt == "cbor-packed":
            out.write(pack_cbor(doc))
            rows = len(doc) if isinstance(doc, list) else 1
        elif packed_in:
            rows = pack(doc, out, chunk_rows=chunk_rows, checksum=checksum, portable=portable)
        else:
            with open(input, "rb") as src:
                rows = pack_file(
                    src, out, chunk_rows=chunk_rows, progress=progress, checksum=checksum, portable=portable
                )
    size_in, size_out = Path(input).stat().st_size, Path(output).stat().st_size
    click.echo(
        f"{output}: {rows:,} rows, {size_out:,} bytes ({size_out / max(size_in, 1):.3f} of {size_in:,})",
        err=True,
    )


def _is_packed_cbor(head: bytes) -> bool:
    """Whether a file starts with a Packed CBOR table setup: tag 113 or tag 1113."""
    return head.startswith((b"\xd8\x71", b"\xd9\x04\x59"))


@main.command("unpack")
@click.argument("input", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False))
def unpack_cmd(input: str, output: str) -> None:
    """Unpack a .zct container or a Packed CBOR file back to the identical JSON document."""
    from zeroc import _json
    from zeroc.tabular import open_container, unpack, unpack_cbor

    with open(input, "rb") as src:
        if _is_packed_cbor(src.read(4)):
            src.seek(0)
            doc = unpack_cbor(src.read())
            with open(output, "wb") as out:
                out.write(_json.dumps(doc))
            return
    with open_container(input) as reader, open(output, "wb") as out:
        unpack(reader, out)


@main.command("rows")
@click.argument("input", type=click.Path(dir_okay=False))
@click.option("--range", "span", default=None, help="START:STOP (Python slice, no step)")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="NDJSON file (default: stdout)")
def rows_cmd(input: str, span: str | None, output: str | None) -> None:
    """Print rows of a .zct container as NDJSON, reading only the chunks they live in."""
    from zeroc import _json
    from zeroc.tabular import open_container

    with open_container(input) as reader:
        start: int | None = None
        stop: int | None = None
        if span:
            a, sep, b = span.partition(":")
            try:
                start = int(a) if a else None
                stop = int(b) if b else None
            except ValueError:
                raise click.UsageError(f"--range {span!r} is not START:STOP") from None
            if not sep:  # one row, negative indices counting from the end as in Python
                start = start if start is None or start >= 0 else start + len(reader)
                stop = None if start is None else start + 1
        out = open(output, "wb") if output else sys.stdout.buffer
        try:
            for row in reader.iter_rows(start, stop):
                out.write(_json.dumps(row) + b"\n")
        finally:
            if output:
                out.close()


@main.command("append")
@click.argument("container", type=click.Path(dir_okay=False))
@click.argument("more", type=click.Path(dir_okay=False))
def append_cmd(container: str, more: str) -> None:
    """Append rows (NDJSON, a JSON array, or a document with the same table) to a container."""
    from zeroc.tabular import append, table_path

    rows: Any = list(_read_json(Path(more)))
    if len(rows) == 1 and isinstance(rows[0], dict) and not more.endswith((".ndjson", ".jsonl")):
        path = table_path(rows[0])  # a whole document: take the rows at its table path
        if path:
            rows = rows[0][path[0]]
    n = append(container, rows)
    click.echo(f"{container}: {n:,} rows appended", err=True)


@main.command("serve-demo")
@click.option("--port", default=8000, show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--wsgi", is_flag=True, help="serve the Flask example with waitress instead")
@click.option("--dict", "dict_path", type=click.Path(dir_okay=False), help="use (or create) this dictionary")
def serve_demo_cmd(port: int, host: str, wsgi: bool, dict_path: str | None) -> None:
    """Serve the demo API (FastAPI on uvicorn) with a dictionary trained on generated Orders."""
    from zeroc._dictionary import Dictionary
    from zeroc.http import demo

    if dict_path and Path(dict_path).exists():
        d = Dictionary.load(dict_path)
    else:
        click.echo("serve-demo: training a dictionary on 5,000 generated Orders", err=True)
        d = demo.train_demo_dictionary()
        if dict_path:
            d.save(dict_path)
    click.echo(f"serve-demo: dictionary {d.id[:16]} on http://{host}:{port}/orders/1", err=True)
    if wsgi:
        import waitress

        # Idle or stalled connections closed after 10 s, checked every 2 s; a thousand may be
        # open (waitress's defaults, 120 s and 100, let 100 idle sockets stall it for 2 min).
        waitress.serve(
            demo.create_wsgi_app(d),
            host=host,
            port=port,
            threads=8,
            channel_timeout=10,
            cleanup_interval=2,
            connection_limit=1000,
            _quiet=True,
        )
    else:
        import uvicorn

        # uvicorn has no timeout for a request whose headers never end: bound the connections
        # (past 1,000 it answers 503) and put a proxy with header timeouts in front in production.
        uvicorn.run(
            demo.create_app(d),
            host=host,
            port=port,
            log_level="warning",
            timeout_keep_alive=5,
            limit_concurrency=1000,
            timeout_graceful_shutdown=5,
        )


@main.command("demo")
@click.option("--count", default=4000, show_default=True, help="messages per workload")
def demo_cmd(count: int) -> None:
    """Train on generated Order/ProductView/SearchRequest messages and print the sizes."""
    import gzip

    from zeroc._codec import Codec
    from zeroc._train import train
    from zeroc.workloads import WORKLOADS, generate

    click.echo(f"{'workload':<16}{'JSON':>8}{'JSON+gzip':>11}{'protobuf':>10}{'Zeroc':>8}  codec")
    for name, (_make, cls) in WORKLOADS.items():
        msgs = generate(name, count * 2, seed=1)
        d = train(msgs[:count], schema=cls)
        codec = Codec(d)
        test = msgs[count:]
        frames = codec.encode_many(test)
        assert codec.decode_many(frames) == test, "round trip failed"
        js = [json.dumps(m, separators=(",", ":")).encode() for m in test]

        def mean(xs: list[bytes]) -> float:
            return sum(map(len, xs)) / len(xs)

        pb = [codec.schema.dumps(m) for m in test]  # type: ignore[union-attr]
        click.echo(
            f"{name:<16}{mean(js):8.1f}{mean([gzip.compress(j, 6) for j in js]):11.1f}"
            f"{mean(pb):10.1f}{mean(frames):8.1f}  {d.codec['method']}-{d.codec['level']}"
        )
    click.echo("bytes per message, mean over held-out messages; every message round-tripped exactly")
