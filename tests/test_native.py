"""The native coder (zeroc/learned/_native.c) against Python's integers, and the code generated on it
against the pure-Python code: the same payload bytes, the same values, the same errors."""

from __future__ import annotations

import collections
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zeroc
from zeroc import DecodeError, ZerocError, _json
from zeroc._defaults import MAX_VALUES
from zeroc.learned import _generate
from zeroc.learned._coder import check, shortest
from zeroc.learned._model import Model
from zeroc.workloads import generate

if _generate._native is None:
    pytest.fail(
        "zeroc.learned._native is not built: reinstall Zeroc where a C compiler and Python's headers are "
        "(without them Zeroc runs on its pure-Python coder, which these tests compare it with)",
        pytrace=False,
    )
from zeroc.learned import _native

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "spec" / "vectors"


def test_the_built_extension_is_the_source_here() -> None:
    """An edit to _native.c that no longer compiles leaves the old module in place (the build
    is optional): the tests would run the old code."""
    source = ROOT / "src" / "zeroc" / "learned" / "_native.c"
    if Path(_native.__file__).parent == source.parent:  # an editable install, built in place
        assert Path(_native.__file__).stat().st_mtime >= source.stat().st_mtime, (
            "zeroc.learned._native is older than src/zeroc/learned/_native.c: "
            "rebuild it (make test reinstalls)"
        )


def pure_python(model: Model) -> Model:
    """The same model with its generated code keeping the coder's integers in Python."""
    saved, _generate.NATIVE = _generate.NATIVE, False
    try:
        return Model(model.root, model.common, model.samples, model.side, model.version)
    finally:
        _generate.NATIVE = saved


def mutated(rng: random.Random, payload: bytes) -> bytes:
    """``payload`` with bits flipped, cut short, extended, or replaced by random bytes."""
    b = bytearray(payload)
    r = rng.random()
    if r < 0.35 and b:
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif r < 0.6:
        b = b[: rng.randrange(len(b) + 1)]
    elif r < 0.8:
        b += rng.randbytes(rng.randint(1, 8))
    elif r < 0.95:
        b = bytearray(rng.randbytes(rng.randint(0, 400)))
    else:
        b = bytearray(rng.randbytes(rng.randint(400, 2000)))
    return bytes(b)


def _outcome(fn: object, arg: object) -> object:
    try:
        return ("value", fn(arg))  # type: ignore[operator]
    except ZerocError as e:
        return ("error", type(e))


def assert_same_code(model: Model, values: list[object], rng: random.Random) -> None:
    """Native and pure-Python generated code agree on every value and on payloads mutated."""
    pure = pure_python(model)
    if model.version >= 6:  # no generated code: the nodes walked in C, or in Python
        assert model._walk is not None and pure._walk is None, "the model's walk is not native"
    else:
        assert model._fast_decode.__globals__.get("_decoder") is not None, "the model's code is not native"
        assert pure._fast_decode.__globals__.get("_decoder") is None
    payloads = []
    for v in values:
        a, b = model._fast_encode(v), pure._fast_encode(v)
        assert a == b, v
        if a is not None:
            payloads.append(a)
            assert model._fast_decode(a) == v
    for p in payloads:
        for cut in (p[:-1], p + b"\x00", bytes([p[0] ^ 1]) + p[1:], rng.randbytes(len(p))):
            assert _outcome(model._fast_decode, cut) == _outcome(pure._fast_decode, cut), cut
    if model._frame is not None:  # Program.frame, Codec.encode's one call, off the common path too
        assert_same_frames(model, pure, values)


def assert_same_frames(model: Model, pure: Model, values: list[object]) -> None:
    """Program.frame gives pure Python's payload for each value, coded twice in a row: the
    second codes its side stream's head from the guess the first leaves (a payload of the same
    width), the first from the value before it (often another width)."""
    assert model._frame is not None
    frame = model._frame
    for v in values:
        want = _outcome(pure.encode, v)
        for _ in range(2):
            assert _outcome(lambda x: frame(x, b""), v) == want, v


# -- the coder's steps against Python's integers --------------------------------------------------

head = st.integers(1, 2**64 - 1).flatmap(
    lambda den: st.tuples(st.integers(0, den - 1), st.just(den)).flatmap(
        lambda t: st.tuples(st.just(t[0]), st.integers(1, t[1] - t[0]), st.just(t[1]))
    )
)
totals = st.sampled_from([1, 2, 255, 2**16, 2**32 - 1, 2**40, 2**63, 2**64 - 1]) | st.integers(1, 2**64 - 1)


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[int], int, int, bool]:
    freqs = draw(st.lists(st.integers(1, 2**20) | st.integers(1, 3), min_size=1, max_size=40))
    esc = draw(st.sampled_from([0, 0, 1, 7, 2**30]))
    return freqs, esc, esc + sum(freqs), draw(st.booleans())  # slot array, or binary search


steps = st.lists(
    st.one_of(
        st.tuples(st.just("uni"), totals),
        st.tuples(st.just("bits"), st.integers(0, 63)),
        st.tuples(st.just("sym"), tables()),
    ),
    max_size=25,
)


@settings(max_examples=400, deadline=None)
@given(data=st.binary(max_size=80), h=head, ops=steps)
def test_decoder_steps_are_python_integer_steps(data: bytes, h: tuple[int, int, int], ops: list) -> None:  # type: ignore[type-arg]
    low, rng, den = h
    d = _native.decoder(data, low, rng, den)
    num, scale = int.from_bytes(data, "big"), 1 << (8 * len(data))
    x, R = num * den - low * scale, scale * rng
    if not 0 <= x < R:
        assert d is None
        return
    assert d is not None and (d.x, d.R, d.den, d.num) == (x, R, den, num)
    for op, arg in ops:
        if op == "sym":
            freqs, esc, total, direct = arg
            values = [object() for _ in freqs]
            escape = object()
            got = d.sym(_native.Table(freqs, values, total, esc, escape, direct))
            xT = x * total
            s = xT // R
            start, freq, want = 0, esc, escape
            if s >= esc:
                start = esc
                for f, v in zip(freqs, values, strict=True):
                    if s < start + f:
                        freq, want = f, v
                        break
                    start += f
            x, R, den = xT - start * R, R * freq, den * total
            assert got is want
        else:
            n = arg if op == "uni" else 1 << arg
            got = d.uni(n) if op == "uni" else d.bits(arg)
            xT = x * n
            assert got == xT // R
            x, den = xT - got * R, den * n
        assert (d.x, d.R, d.den) == (x, R, den)
    # end() may only say "canonical" where the full check agrees
    if d.end():
        check(data, num, scale, x, R, den, len(data), False)


@settings(max_examples=400, deadline=None)
@given(
    h=head,
    syms=st.lists(totals.flatmap(lambda t: st.tuples(st.integers(0, t - 1), st.just(t))), max_size=20),
    data=st.data(),
)
def test_encoder_and_payload_are_python_integer_steps(
    h: tuple[int, int, int], syms: list, data: st.DataObject
) -> None:  # type: ignore[type-arg]
    low, rng, den = h
    e = _native.encoder(low, rng, den)
    args: list[int | _native.Sym] = []
    for start, total in syms:
        freq = data.draw(st.integers(1, total - start))
        if data.draw(st.booleans()):  # a symbol made once, or three ints
            args.append(_native.Sym(start, freq, total))
        else:
            args += [start, freq, total]
        low, rng, den = low * total + rng * start, rng * freq, den * total
    e.put(*args)
    assert (e.low, e.rng, e.den) == (low, rng, den)
    n, k = shortest(low, rng, den, False)
    assert e.payload() == (k.to_bytes(n, "big") if n else b"")


def test_a_searched_table_finds_the_entries_of_the_slot_array() -> None:
    """Large tables find a slot's entry by buckets and a short search, not a slot array: both
    give the same entry for every slot (vocabularies of thousands of words, skewed counts)."""
    rng = random.Random(5)
    for k in [1, 2, 3, 17, 1000, 4096, 5000]:
        freqs = [rng.choice([1, 1, 2, 3, 5, 12]) for _ in range(k)]
        freqs[rng.randrange(k)] += 20_000  # one common word
        esc = rng.choice([0, 1, 9])
        total = esc + sum(freqs)
        assert total - esc <= 1 << 16  # where the slot array is made
        values = [object() for _ in freqs]
        direct = _native.Table(freqs, values, total, esc, None, True)
        searched = _native.Table(freqs, values, total, esc, None, False)
        for _ in range(300):
            data = rng.randbytes(12)
            a, b = _native.decoder(data, 0, 1, 1), _native.decoder(data, 0, 1, 1)
            assert a is not None and b is not None
            for _ in range(4):
                assert a.sym(direct) is b.sym(searched)


def test_payloads_that_decode_to_the_end_are_canonical_exactly_when_the_check_says() -> None:
    """Random payloads against a random symbol sequence: where end() says canonical, the full
    check passes; where the full check passes at the usual lengths, end() says so too."""
    rnd = random.Random(3)
    agreed = 0
    for _ in range(3000):
        size = rnd.randrange(0, 6)
        data = rnd.randbytes(size)
        d = _native.decoder(data, 0, 1, 1)
        assert d is not None
        for _ in range(rnd.randrange(0, 5)):
            d.uni(rnd.choice([2, 3, 10, 256, 1000]))
        num, x, R, den = d.num, d.x, d.R, d.den
        try:
            check(data, num, 1 << (8 * size), x, R, den, size, False)
            ok = True
        except DecodeError:
            ok = False
        n0 = (den.bit_length() - R.bit_length()) // 8 + size
        if d.end():
            assert ok
        elif n0 in (size, size - 1):
            assert not ok
        agreed += ok
    assert agreed > 100


class _Key(str):
    """A str subclass (as enum.StrEnum keys are): equal to the str it spells."""


key_names = st.sampled_from(["a", "b", "c", "id", "ü"])
keys_of = st.one_of(key_names, key_names.map(_Key), st.integers(0, 2))


@settings(max_examples=500, deadline=None)
@given(
    value=st.one_of(st.dictionaries(keys_of, st.integers(), max_size=4), st.lists(st.integers()), st.none()),
    keys=st.lists(key_names, max_size=4, unique=True).map(tuple),
)
def test_fields_is_the_dict_test_of_the_pure_python_code(value: object, keys: tuple[str, ...]) -> None:
    python = type(value) is dict and tuple(value) == keys
    try:
        got = _native.fields(value, keys)
    except TypeError:
        assert not python
        return
    assert python and isinstance(value, dict)
    assert got == tuple(value.values()) and all(a is b for a, b in zip(got, value.values(), strict=True))


def test_tables_that_do_not_fill_their_total_are_refused() -> None:
    for freqs, values, total, esc in [
        ([], [], 1, 0),
        ([1, 2], ["a"], 3, 0),
        ([1, 2], ["a", "b"], 4, 0),
        ([0, 2], ["a", "b"], 2, 0),
        ([1], ["a"], 1, 1),
        ([2**64 - 1, 2], ["a", "b"], 2**64 - 1, 0),
    ]:
        with pytest.raises(ValueError):
            _native.Table(freqs, values, total, esc, None)
    with pytest.raises(OverflowError):
        _native.Table([-1], ["a"], 1, 0, None)
    for start, freq, total in [(0, 0, 1), (1, 1, 1), (0, 2, 1), (0, 1, 0)]:
        with pytest.raises(ValueError):
            _native.Sym(start, freq, total)
    with pytest.raises(TypeError):
        _native.encoder(0, 1, 1).put(1, 2)  # not a whole triple
    with pytest.raises(zeroc.InvalidDictionary):  # as the generator reports it (never a ValueError)
        _generate._new_table([1, 2], ["a", "b"], 4, 0)
    assert _native.encoder(0, 1, 1).payload() == b""
    for low, rng, den in [(0, 0, 1), (1, 1, 1), (0, 2, 1), (0, 1, 0)]:
        with pytest.raises(ValueError):
            _native.encoder(low, rng, den)
        with pytest.raises(ValueError):
            _native.decoder(b"\x01", low, rng, den)


# -- generated code: native and pure Python give the same bytes -----------------------------------


@pytest.mark.parametrize(
    ("model", "workload"),
    [("order-learned", "order"), ("search_request-learned", "search_request"), ("accounts-learned", None)],
)
def test_native_code_writes_the_pure_python_bytes(model: str, workload: str | None) -> None:
    d = zeroc.Dictionary.from_bytes((VECTORS / f"{model}.zcd").read_bytes())
    m = zeroc.Codec(d, frame_id="bare")._model
    assert m is not None
    rng = random.Random(5)
    if workload is not None:
        values: list[object] = generate(workload, 400, seed=9)
    else:  # the accounts spec/vectors/make_learned_vectors.py trains on (format 3's nodes)
        path = VECTORS / "make_learned_vectors.py"
        spec = importlib.util.spec_from_file_location("make_learned_vectors", path)
        assert spec is not None and spec.loader is not None
        maker = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(maker)
        values = [maker._account(rng) for _ in range(300)]
    on_path = sum(m._fast_encode(v) is not None for v in values)
    assert on_path > len(values) // 2, on_path
    assert_same_code(m, values, rng)


def test_models_too_wide_for_the_native_coder_keep_python_integers() -> None:
    """A range of 2^64 integers does not fit the native coder's 64-bit totals: in format 5 that
    model's generated code and walk keep Python's integers; in format 6 the range coder splits
    the symbol (the node goes to Python, its symbols to the native coder). All round-trip, with
    the pure-Python coder's bytes."""
    fm = _generate.fm
    root = fm.Object(("big", "k"), [fm.IntRange(0, 1 << 64, 1, 99), fm.IntRange(-5, 10, 1, 99)], 1, 99)
    for version in (5, 6):
        m = Model(root, 99, 100, version=version)
        pure = pure_python(m)
        assert m._fast_decode.__globals__.get("_decoder") is None
        assert (m._walk is not None) == (version == 6)
        values = [{"big": 0, "k": -5}, {"big": (1 << 64) - 1, "k": 4}, {"big": 12345, "k": 0}]
        values.append({"big": -1, "k": 0})
        for v in values:
            assert (m._fast_encode(v) is not None) == (v["big"] >= 0)
            assert m.encode(v) == pure.encode(v)
            assert m.decode(m.encode(v)) == v


def test_integers_wider_than_any_range_train_a_loadable_model() -> None:
    """The learner offered a range of 2^70 integers, which the reader refuses (a dictionary
    that could not be loaded): such a column now gets another model."""
    rng = random.Random(2)
    samples = [{"big": rng.randrange(1 << 70), "k": rng.choice("abc")} for _ in range(400)]
    d = zeroc.train(samples, candidates=[("learned", 19)])
    codec = zeroc.Codec(zeroc.Dictionary.from_bytes(d.to_bytes()), frame_id="bare")
    for v in samples[:50]:
        assert codec.decode(codec.encode(v)) == v


def test_native_and_pure_python_decoders_agree_on_random_and_mutated_payloads() -> None:
    """Differential fuzzing: payloads of the vectors' models, bit-flipped, cut, extended or
    random, give the same value or the same error on both coders (and what decodes re-encodes
    to the same bytes on both)."""
    rng = random.Random(17)
    cases = []
    for name, workload in [("order-learned", "order"), ("search_request-learned", "search_request")]:
        d = zeroc.Dictionary.from_bytes((VECTORS / f"{name}.zcd").read_bytes())
        m = zeroc.Codec(d, frame_id="bare")._model
        assert m is not None
        payloads = [p for p in map(m._fast_encode, generate(workload, 200, seed=4)) if p is not None]
        cases.append((m, pure_python(m), payloads))
    for _ in range(20_000):
        m, pure, payloads = rng.choice(cases)
        b = mutated(rng, rng.choice(payloads))
        got = _outcome(m._fast_decode, b)
        assert got == _outcome(pure._fast_decode, b), b.hex()
        if got[0] == "value" and got[1] is not _generate.fm.OFF:
            assert m._fast_encode(got[1]) == pure._fast_encode(got[1])


def test_the_native_coder_under_address_and_undefined_behaviour_sanitizers(tmp_path: Path) -> None:
    """The C extension built with gcc's AddressSanitizer and UndefinedBehaviorSanitizer runs
    this file's tests (coder steps, same bytes, differential fuzzing): any out-of-bounds access,
    use after free or undefined arithmetic stops the run."""
    gcc = shutil.which("gcc")
    assert gcc is not None, "gcc is needed to build the sanitized native coder"
    libs = [
        subprocess.run(
            [gcc, f"-print-file-name={lib}"], capture_output=True, text=True, check=True
        ).stdout.strip()
        for lib in ("libasan.so", "libubsan.so")
    ]
    assert all(Path(lib).is_file() for lib in libs), f"gcc's sanitizer runtimes are missing: {libs}"
    package = tmp_path / "zeroc"
    shutil.copytree(ROOT / "src" / "zeroc", package, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    target = package / "learned" / Path(_native.__file__).name
    subprocess.run(
        [
            gcc,
            "-shared",
            "-fPIC",
            "-O1",
            "-g",
            "-fsanitize=address,undefined",
            "-fno-omit-frame-pointer",
            "-fno-sanitize-recover=all",
            f"-I{sysconfig.get_paths()['include']}",
            str(package / "learned" / "_native.c"),
            "-o",
            str(target),
        ],
        check=True,
    )
    env = dict(
        os.environ,
        PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}",
        LD_PRELOAD=" ".join(libs),
        ASAN_OPTIONS="detect_leaks=0",  # the interpreter keeps memory until exit, by design
        UBSAN_OPTIONS="print_stacktrace=1",
    )
    probe = subprocess.run(
        [sys.executable, "-c", "import zeroc.learned._native as n; print(n.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.strip() == str(target)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-s",  # a sanitizer's report goes to stderr as it happens, not into pytest's capture
            "-p",
            "no:cacheprovider",
            str(ROOT / "tests" / "test_native.py"),
            "-k",
            "not sanitizers",
        ],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert "Sanitizer" not in run.stderr and "runtime error" not in run.stderr, run.stderr[-4000:]
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "passed" in run.stdout


def test_native_and_pure_python_agree_on_a_format_5_model() -> None:
    """The format-5 vectors' model (batches of readings): both generated coders write the same
    payloads for values on the common path, leave it alike for a value too large for one block,
    and give the same value or error for random, cut and bit-flipped payloads -- the payload of
    two blocks on the common path included."""
    vectors = VECTORS / "learned-5.json"
    doc = json.loads(vectors.read_text())
    d = zeroc.Dictionary.from_bytes((VECTORS / doc["dictionary"]).read_bytes())
    m = zeroc.Codec(d, frame_id="bare")._model
    assert m is not None and m.blocks
    pure = pure_python(m)
    inputs = [v["input"] for v in doc["valid"]]
    payloads = []
    for value in inputs:
        fast = m._fast_encode(value)
        assert fast == pure._fast_encode(value)
        payloads.append(fast if fast is not None else m.encode(value))
    payloads += [bytes.fromhex(v["frame_hex"])[1:] for v in doc["invalid"]]
    rng = random.Random(31)
    for _ in range(3000):
        b = mutated(rng, rng.choice(payloads))
        got = _outcome(m._fast_decode, b)
        assert got == _outcome(pure._fast_decode, b), b.hex()


# -- the general rules walked in C (zeroc/learned/_walk.py) against the nodes' Python walk ---------


def python_walk(model: Model) -> Model:
    """The same model with its general rules walked by the Python nodes."""
    pure = pure_python(model)
    assert pure._walk is None
    return pure


def assert_same_walk(model: Model, values: list[object], rng: random.Random) -> None:
    """The C walk writes the Python walk's bytes for every value off the common path, decodes
    them to the value, and gives the same value or error for those payloads mutated."""
    assert model._walk is not None, "the model's general rules are not native"
    pure = python_walk(model)
    payloads = []
    for v in values:
        a = model.encode(v)
        assert a == pure.encode(v), v
        assert model.decode(a) == v
        payloads.append(a)
    assert payloads
    for _ in range(20 * len(payloads)):
        b = mutated(rng, rng.choice(payloads))
        got = _outcome(model.decode, b)
        assert got == _outcome(pure.decode, b), b.hex()


@pytest.mark.parametrize("name", ["tweets", "github_events", "jenkins_jobs", "faker_users", "aws_operations"])
def test_the_native_walk_writes_the_python_walks_bytes_on_real_traffic(name: str) -> None:
    """Real and realistic messages (free text, optional keys, maps, fields of several types)
    trained on one half and coded from the other: every node kind the learner chooses there."""
    from zeroc.bench import _corpora
    from zeroc.learned._nodes import walk

    train, test = _corpora.SETS[name][0](300)
    m = Model.learn(train)
    kinds = {type(n).__name__ for n in walk(m.root)}
    assert {"Object", "Categorical", "Raw"} <= kinds, kinds
    off = [v for v in test if m._fast_encode(v) is None]
    assert off, "no message off the common path"
    assert_same_walk(m, off[:120], random.Random(name))


def test_the_native_walk_covers_every_node_kind() -> None:
    """A model with every kind the program codes in C and the rules it leaves to Python, on
    values of every branch: the same bytes, the same values, the same errors when mutated."""
    fm = _generate.fm
    rng = random.Random(8)
    seen: list[object] = ["a", 1, 2.5, True, None, {"k": [1]}]
    cat = fm.Categorical(seen, [5, 4, 3, 2, 2, 1], 2, fm.IntRange(-3, 9, 1, 9))
    digits = fm.Categorical.learn([str(i) for i in range(9)])
    letters = fm.Categorical.learn(["ab", "c"])
    date = fm.Shape(("", "-", ":", ""), "99a", [digits, digits, letters], 1, 9)
    words = fm.Words(fm.Categorical.learn([1, 2, 3]), [fm.Categorical.learn(["x", "y"])] * 2, 1, 9)
    parts = fm.Categorical.learn(["ab", "-", "7", "日"])  # spans are found across string kinds
    tokens = fm.Words(fm.Magnitude.learn([1, 2, 5]), [parts], 1, 9, tokens=True)
    number = fm.Template("", 0, fm.IntRange(0, 100, 1, 9), 1, 9)
    inner = fm.Object(
        ("id", "sid", "n", "price", "code", "when", "text", "tok", "tags", "attrs", "any"),
        [
            fm.Magnitude.learn([1, 300, -7, 1 << 40]),
            fm.Affix(0, "u", "", False, fm.Raw(), 1, 9),
            fm.IntRange(-(1 << 63), (1 << 64) - 1, 1, 9),
            fm.Decimal(2, fm.Magnitude.learn([199, 5]), 1, 9),
            fm.Template("SKU-", 4, fm.IntRange(0, 10_000, 1, 9), 1, 9),
            date,
            words,
            tokens,
            fm.Array(fm.Categorical.learn([0, 1, 2]), cat, 1, 9),
            fm.Map(fm.Categorical.learn([0, 1, 2]), number, cat, 1, 9),
            fm.Categorical(["z"], [3], 1),
        ],
        1,
        9,
        fm.Object(("id",), [fm.IntRange(0, 10, 1, 9)], 1, 9),
    )
    model = Model(fm.Array(fm.Categorical.learn([1, 2]), inner, 1, 9), 0, 10)

    def item() -> object:
        return {
            "id": rng.choice([0, 1, -1, 5, 1 << 40, -(1 << 62), 1 << 63, -(1 << 64) + 1, 1 << 70, "7", 2.0]),
            "sid": rng.choice(["u5", "u1", "x", 5]),
            "n": rng.choice([0, -(1 << 63), (1 << 63) - 2, 1 << 63, True, None]),
            "price": rng.choice([1.99, 0.05, -0.0, 0.0, 1e300, float("inf"), 1.234, 3, 12345678901234.5]),
            "code": rng.choice(["SKU-0042", "SKU-42", "SKU-00420", "sku-0042", "SKU-٠١٢٣", ""]),
            "when": rng.choice(["1-2:ab", "1-2:c", "12-4:ab", "1-2:", "1-2:ab3", "a-2:c", "1-2:é", 5]),
            "text": rng.choice(["x y", "x  y", " x", "x y x y", "", "ü", "x 日 y", "y 😀 x", 3]),
            "tok": rng.choice(["ab-7", "ab7", "a", "--", "", "日本", "ab日😀-7", "日ab", None]),
            "tags": rng.choice([[], ["a", 1], [2.5, True, None, {"k": [1]}, {"k": [2]}, 8, 99], "no"]),
            "attrs": rng.choice([{}, {"1": "a", "22": 2.5}, {"01": None}, {"x": 1}, [1]]),
            "any": rng.choice(["z", "y", 1.0]),
        }

    values: list[object] = [[item() for _ in range(rng.choice([0, 1, 2, 5]))] for _ in range(150)]
    values += [[{"id": 3}], [{"id": 30}], [{"id": 1, "sid": "u1"}], "text", {"a": 1}, [1, [2]]]
    assert_same_walk(model, values, rng)


@pytest.mark.parametrize("version", [6, 7, 8])
def test_range_coder_vectors_on_the_native_and_the_pure_python_coder(version: int) -> None:
    """learned-6.json's, -7's and -8's models (range coder; 7: chars; 8: chained key orders on the
    common path): both coders write the
    released payloads and read them back; both refuse the invalid ones; mutated payloads give
    both the same value or error."""
    doc = json.loads((VECTORS / f"learned-{version}.json").read_text(encoding="utf-8"))
    d = zeroc.Dictionary.from_bytes((VECTORS / doc["dictionary"]).read_bytes())
    m = zeroc.Codec(d, frame_id="bare")._model
    assert m is not None and m.version == version and m._walk is not None
    pure = python_walk(m)
    learned_tag = zeroc.Codec(d)._learned_tag  # a learned frame with the dictionary by context
    payloads = []
    for v in doc["valid"]:
        frame = bytes.fromhex(v["frame_hex"])
        if v["codec"].get("frame_id") == "bare":
            payload = frame
        elif frame[0] == learned_tag:
            payload = frame[1:]
        else:
            continue
        assert m.encode(v["input"]) == pure.encode(v["input"]) == payload, v["name"]
        assert m.decode(payload) == pure.decode(payload) == v["input"]
        payloads.append(payload)
    assert len(payloads) >= 6
    for v in doc["invalid"]:
        payload = bytes.fromhex(v["frame_hex"])[1:]
        for model in (m, pure):
            with pytest.raises(DecodeError):
                model.decode(payload)
    rng = random.Random(61)
    for _ in range(4000):
        b = mutated(rng, rng.choice(payloads))
        got = _outcome(m.decode, b)
        assert got == _outcome(pure.decode, b), b.hex()


def test_the_native_walk_codes_table_rules_as_python() -> None:
    """Given and prefixed rules (the Order workload: price given SKU, name given SKU, postal
    code given city) are coded in C on both paths: held, broken, and without a prediction
    (an SKU the table lacks), with the Python walk's bytes and errors."""
    from zeroc.learned._nodes import Given, Prefixed, walk

    orders = generate("order", 1600, seed=3)
    m = Model.learn(orders[:1200])
    kinds = {type(n) for n in walk(m.root)}
    assert Given in kinds and m._walk is not None
    rng = random.Random(4)
    values: list[object] = list(orders[1200:1400])
    for o in orders[1400:1500]:
        item = o["items"][0]
        rest = o["items"][1:]
        ship = o["shipping_address"]
        values += [
            {**o, "items": [{**item, "price": item["price"] + 0.5}, *rest]},  # a rule broken
            {**o, "items": [{**item, "product_id": 999_999_999}, *rest]},  # no prediction
            {**o, "shipping_address": {**ship, "postal_code": "X" + ship["postal_code"]}},
            {**o, "shipping_address": {**ship, "country": "ZZ"}},
            {**o, "total_amount": -0.0},
        ]
    assert_same_walk(m, values, rng)
    assert Prefixed in kinds


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=40), min_size=2, max_size=30), st.lists(st.text(max_size=60), max_size=12))
def test_chars_codes_any_string_in_c_as_in_python(learned: list[str], coded: list[str]) -> None:
    """A chars node (format 7) learned from some strings codes any other -- bytes no table
    lists, non-ASCII, lone surrogates (JSON text), the empty string -- with the same bytes in C
    and in Python, on the common path and off it, inside an object and as a words vocabulary's
    fallback; mutated payloads give both the same value or error."""
    from zeroc.learned._nodes import Categorical, Chars, Object, Words

    chars = Chars.learn(learned)
    vocab = Categorical.learn(
        [w for v in learned for w in v.split(" ") if w] or ["a"], fallback=Chars.learn(learned)
    )
    words = Words(Categorical.learn([1, 2, 3]), [vocab], 1, 9)
    root = Object(("c", "w"), [chars, words], 1, 9)
    m = Model(root, 5, 10)
    assert m.version == 7 and m._walk is not None
    values: list[object] = [{"c": c, "w": w} for c, w in zip(coded + learned, learned + coded, strict=False)]
    values += [{"c": "ab\ud800", "w": "x"}, {"c": 7, "w": "a  b"}, {"c": "", "w": "z"}]
    rng = random.Random(len(learned))
    assert_same_code(m, values, rng)
    assert_same_walk(m, values, rng)
    assert Model.from_bytes(m.to_bytes()).to_bytes() == m.to_bytes()


_NUMBER = st.one_of(
    st.integers(-(1 << 70), 1 << 70),
    st.integers(-50, 50),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-1000, 1000).map(lambda f: round(f, 2)),
    st.sampled_from([True, None, "2", -0.0]),
)
_ITEM = st.one_of(
    st.fixed_dictionaries({"qty": _NUMBER, "price": _NUMBER}),
    st.fixed_dictionaries({"qty": st.integers(1, 9), "price": st.integers(1, 99_999).map(lambda c: c / 100)}),
    st.fixed_dictionaries({"qty": _NUMBER}),
    st.just([1, 2]),
)
_TEXT = st.one_of(st.text(max_size=12), st.sampled_from(["Abdera2-trunk", "a b/c~d", "日本", "x\ud800y", ""]))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.lists(_ITEM, max_size=4), st.sampled_from([{"qty": 1}, "items", 7])),
            st.one_of(_NUMBER, st.just("sum")),
            _TEXT,
            st.one_of(_TEXT, st.just("affix")),
            st.one_of(st.integers(-(1 << 65), 1 << 65), st.sampled_from([True, "12", 1.5])),
            st.one_of(_TEXT, st.just("affix")),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_sums_and_affixes_code_in_c_as_in_python(rows: list[tuple[object, ...]]) -> None:
    """The rules C now computes -- a total as the sum of items' products (ints and floats mixed,
    rounded as round() does) and a text built from an earlier field (URL-quoted, or an int's
    decimal text) -- code and decode every value as the Python nodes do: rules that hold and
    break, sources without a prediction or past what C takes, on both paths; mutated payloads
    give both the same value or error."""
    fm = _generate.fm
    price = fm.Decimal(2, fm.Magnitude.learn([1, 999, 99_999]), 1, 9)
    item = fm.Object(("qty", "price"), [fm.Magnitude.learn([1, 9]), price], 1, 9)
    sums = [fm.SumOf(0, "qty", "price", 2, fm.Raw(), 1, 9), fm.SumOf(0, "price", "qty", 0, price, 1, 9)]
    sums[1].sure = True
    urls = [fm.Affix(2, "https://h/job/", "/", True, fm.Raw(), 1, 9), fm.Affix(2, "", "", False, price, 1, 9)]
    numeric = fm.Affix(4, "#", "", False, fm.Categorical(["x"], [3], 1, fm.Raw()), 1, 9)
    numeric.numeric = True
    keys = ("items", "total", "total2", "name", "url", "url2", "id", "id_str")
    kids = [fm.Array(fm.Categorical.learn([0, 1, 2, 3, 4]), item, 1, 9), *sums, fm.Raw(), *urls]
    model = Model(fm.Object(keys, [*kids, fm.Magnitude.learn([1, 1 << 40]), numeric], 1, 9), 5, 10)
    values: list[object] = []
    for items, total, name, url, ident, ident_str in rows:
        computed = [s.compute(items) for s in sums]
        v = {
            "items": items,
            "total": computed[0] if total == "sum" else total,
            "total2": computed[1] if total == "sum" else total,
            "name": name,
            "url": urls[0].compute(name) if url == "affix" else url,
            "url2": urls[1].compute(name) if url == "affix" else url,
            "id": ident,
            "id_str": numeric.compute(ident) if ident_str == "affix" else ident_str,
        }
        # NaN != NaN: a value holding one has no round trip to compare
        if fm.MISSING not in v.values() and "NaN" not in json.dumps(v):
            values.append(v)
    if values:
        assert_same_walk(model, values, random.Random(len(values)))


_TIES = [
    0.125,
    0.375,
    2.5,
    0.5,
    1.5,
    -2.5,
    2.675,
    1.005,
    0.045,
    1e-7,
    5e-324,
    -0.0,
    0.0,
    1e22,
    4503599627370.4995,
]
_TIES += [9007199254740991.0 / 10**s for s in range(7)] + [9007199254740993.0 / 10**s for s in range(7)]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(_TIES)), max_size=12)
)
def test_a_sums_rounding_in_c_is_pythons_round(xs: list[float]) -> None:
    """A float total rounded to 0-6 places in C is round()'s, ties and the edges of the integer
    way included (halves, values whose text rounds otherwise than their binary value, the
    smallest subnormal, totals past 2^53 at that scale): the C walk's bytes are the Python
    walk's, whose rule holds on each."""
    fm = _generate.fm
    item = fm.Object(("q", "p"), [fm.Categorical.learn([1]), fm.Raw()], 1, 9)
    for scale in range(7):
        total = fm.SumOf(0, "q", "p", scale, fm.Raw(), 1, 9)
        model = Model(
            fm.Object(("items", "total"), [fm.Array(fm.Categorical.learn([1]), item, 1, 9), total], 1, 9),
            5,
            10,
        )
        pure = python_walk(model)
        for x in [*xs, *_TIES]:
            v = {"items": [{"q": 1, "p": x}], "total": round(x, scale)}
            assert total.compute(v["items"]) == v["total"]
            payload = model.encode(v)
            assert payload == pure.encode(v), (x, scale)
            assert model.decode(payload) == v


def test_a_sum_over_texts_and_big_integers_is_no_prediction_and_codes_exactly() -> None:
    """A sum rule's item fields that are not numbers (a text beside an integer of 2^40) give no
    prediction, at once: multiplied, they would repeat the text into a terabyte. The message
    still codes and decodes exactly on both paths."""
    fm = _generate.fm
    price = fm.Decimal(2, fm.Magnitude.learn([1, 999, 99_999]), 1, 9)
    item = fm.Object(("qty", "price"), [fm.Magnitude.learn([1, 9]), price], 1, 9)
    total = fm.SumOf(0, "qty", "price", 2, fm.Raw(), 1, 9)
    hostile = [{"qty": 1 << 40, "price": "2"}, {"qty": ["x"], "price": 1 << 40}]
    assert total.compute(hostile[:1]) is fm.MISSING
    assert total.compute(hostile[1:]) is fm.MISSING
    model = Model(
        fm.Object(("items", "total"), [fm.Array(fm.Categorical.learn([0, 1, 2]), item, 1, 9), total], 1, 9),
        5,
        10,
    )
    assert_same_walk(
        model,
        [{"items": hostile, "total": 0}, {"items": [{"qty": 3, "price": 2.5}], "total": 7.5}],
        random.Random(5),
    )


_SCALARS = [None, True, False, 0, 1, 1 << 70, 1.0, -0.0, 0.0, float("inf"), 2.5, "", "x", "1"]
_ANY = st.one_of(
    st.sampled_from(_SCALARS),
    st.sampled_from([{}, [], {"a": 1}, {"a": 1.0}, [1], [1.0], [None], {"b": [True]}]),
    st.integers(-3, 3),
    st.text(max_size=3),
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(_ANY, _ANY), min_size=1, max_size=8),
    st.lists(st.tuples(_ANY, _ANY, _ANY), min_size=1, max_size=8),
)
def test_given_rules_over_values_of_every_kind_code_in_c_as_in_python(
    table: list[tuple[object, object]], rows: list[tuple[object, object, object]]
) -> None:
    """Given rules whose sources and predictions are of every JSON kind (None, booleans, ints
    and floats that == each other, -0.0 and 0.0, texts, dicts and lists) hold exactly where
    Python's as_key sameness says, in C as in Python: the same bytes, values and errors. Two
    rules share a dict source, whose key C makes once a value."""
    fm = _generate.fm
    preds = {fm.as_key(src): pred for src, pred in table}
    srcs = [fm.from_key(k) for k in preds]
    rules = [fm.Given(0, dict(preds), fm.Raw(), 1, 9), fm.Given(0, dict(preds), fm.Raw(), 2, 9)]
    source = fm.Categorical.learn(srcs, fallback=fm.Raw())
    model = Model(fm.Object(("src", "a", "b"), [source, *rules], 1, 9), 5, 10)
    values: list[object] = [{"src": s, "a": a, "b": b} for s, a, b in rows]
    values += [{"src": s, "a": p, "b": p} for s, p in table]  # the rules hold
    values += [{"src": s, "a": t, "b": p} for s, p in table for t in _twins(p)]  # == but not the same
    assert_same_walk(model, values, random.Random(len(values)))


def _twins(v: object) -> list[object]:
    """Values == v (or whose JSON text is v's) that as_key tells apart from it."""
    pairs = [(0.0, -0.0), (1, 1.0), (1, True), (0, False), (0, 0.0), ({"a": 1}, {"a": 1.0}), ([1], [1.0])]
    pairs += [([1], [True]), ("1", 1), ("", None), ({}, []), (2.5, "2.5")]
    out = [b for a, b in pairs if _generate.fm.as_key(a) == _generate.fm.as_key(v)]
    return out + [a for a, b in pairs if _generate.fm.as_key(b) == _generate.fm.as_key(v)]


def test_a_rule_source_changed_between_two_values_is_read_again() -> None:
    """The keys of the dicts rules predict from are kept for the rest of one value only: the same
    dicts, changed before the next value, give that value's predictions, with rules taking turns
    between two sources, in C as in Python."""
    fm = _generate.fm
    a, b = {"lang": "en"}, {"lang": "ja"}
    preds = {fm.as_key(a): "hello", fm.as_key(b): "konnichiwa"}
    rules = [fm.Given(j % 2, preds, fm.Raw(), 1, 9) for j in range(3)]
    sources = [fm.Categorical.learn([a, b]), fm.Categorical.learn([b, a])]
    model = Model(fm.Object(("m1", "m2", "g1", "g2", "g3"), [*sources, *rules], 1, 9), 5, 10)
    words = {"en": "hello", "ja": "konnichiwa"}
    m1, m2 = {"lang": "en"}, {"lang": "ja"}
    frames, values = [], []
    for _ in range(3):
        one, two = words[m1["lang"]], words[m2["lang"]]
        value = {"m1": m1, "m2": m2, "g1": one, "g2": two, "g3": one}
        frames.append(model._frame(value, b""))
        values.append(json.loads(json.dumps(value)))
        m1["lang"], m2["lang"] = m2["lang"], m1["lang"]
    assert [model.decode(f) for f in frames] == values
    assert frames == [model._frame(v, b"") for v in values]
    assert_same_walk(model, values, random.Random(3))


def test_short_and_long_texts_of_a_table_decode_as_python_does() -> None:
    """A categorical's short ASCII texts are held in its entries and decoded from there (up to
    15 characters); longer, empty and non-ASCII ones from their str objects: each decodes to
    the value, as a field and as a word of a words value, in C as in Python."""
    fm = _generate.fm
    texts = ["", "a", "x" * 14, "y" * 15, "z" * 16, "é", "ab\u00e9", "日本", "a b", "q" * 40]
    plain = fm.Categorical.learn(texts * 2, fallback=fm.Raw())
    vocab = fm.Categorical.learn([t for t in texts if t and " " not in t] * 2, fallback=fm.Raw())
    words = fm.Words(fm.Categorical.learn([1, 2, 3]), [vocab], 1, 9)
    model = Model(fm.Object(("t", "w"), [plain, words], 1, 9), 5, 10)
    values: list[object] = [{"t": t, "w": w} for t in texts for w in ("a", "y" * 15 + " z" * 8, "é 日本")]
    decoded = [model.decode(model._frame(v, b"")) for v in values]
    assert decoded == values
    assert all(type(d["t"]) is str and type(d["w"]) is str for d in decoded)  # type: ignore[index]
    assert_same_walk(model, values, random.Random(9))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=2, max_size=700), st.integers(1, 50))
def test_a_large_tables_guide_finds_every_entry_as_its_slot_array_does(counts: list[int], esc: int) -> None:
    """A categorical of more than 256 slots decodes through a guide of one entry per 16 slots and
    a few steps from there: every entry (first, last, of any frequency) and the escape, on both
    paths, give the Python walk's bytes and values, and mutated payloads the same errors."""
    fm = _generate.fm
    values = [f"v{j}" for j in range(len(counts))]
    table = fm.Categorical(values, counts, esc, fm.Raw())
    model = Model(fm.Object(("x", "y"), [table, fm.Categorical([1, 2], [3, 1], 1, fm.Raw())], 1, 9), 5, 10)
    rows: list[object] = [{"x": v, "y": 1} for v in values] + [{"x": "unseen", "y": 2}, {"x": 7, "y": 1}]
    assert_same_walk(model, rows, random.Random(len(counts)))


def test_a_tables_dicts_and_lists_decode_as_copies_of_their_own() -> None:
    """A categorical's and a given rule's dicts and lists decode (copied in C) to values equal to
    Python's, of the same types all the way down, which the caller may change without changing
    the model: the next decode gives the table's value again. An OrderedDict learned in this
    process is copied by copy_value, to a plain dict."""
    fm = _generate.fm
    tables: list[object] = [
        {"hashtags": [], "urls": [{"url": "https://t.co/x", "indices": [0, 23]}], "n": 2**70, "f": -0.0},
        [1, 2.5, None, True, "é", {"deep": [[{"x": {}}]]}],
        collections.OrderedDict([("b", 1), ("a", [collections.OrderedDict(z=1)])]),
        {},
        [],
    ]
    source = fm.Categorical.learn(tables * 2, fallback=fm.Raw())
    given = fm.Given(0, {fm.as_key(t): t for t in tables}, fm.Raw(), 1, 9)
    model = Model(fm.Object(("t", "g"), [source, given], 1, 9), 5, 10)
    values = [{"t": t, "g": t} for t in tables]
    frames = [model._frame(v, b"") for v in values]
    want = [json.loads(json.dumps(v)) for v in values]

    def typed(v: object) -> object:
        if isinstance(v, dict):
            return (type(v), [(k, typed(x)) for k, x in v.items()])
        if isinstance(v, list):
            return (type(v), [typed(x) for x in v])
        return (type(v), repr(v))

    for _ in range(2):
        got = [model.decode(f) for f in frames]
        assert [typed(g) for g in got] == [typed(w) for w in want]
        for g in got:
            for part in g.values():  # type: ignore[attr-defined]
                if isinstance(part, dict):
                    if "urls" in part:
                        part["urls"][0]["indices"].append(99)
                    part.clear()
                    part["changed"] = 1
                elif isinstance(part, list):
                    part.append("changed")
    assert tables[0]["urls"][0]["indices"] == [0, 23]  # type: ignore[index]
    assert_same_walk(model, values, random.Random(5))


_SIDE_TEXTS = [
    b'"abc"',
    b'""',
    b'"a\x7fb"',
    b'"\xc3\xa9\xe6\x97\xa5"',
    b'"\xc3"',
    b'"\xed\xa0\x80"',
    b'"a\\nb"',
]
_SIDE_TEXTS += [b'"a\nb"', b'"a"b"', b'"', b"0", b"-0", b"01", b"-01", b"-", b"123456789012345678"]
_SIDE_TEXTS += [b"-123456789012345678", b"9223372036854775807", b"18446744073709551616", b"1.5", b"1e5"]
_SIDE_TEXTS += [b"true", b"false", b"null", b"nul", b"tru", b" 1", b"[1]", b'{"a":1}', b"", b"12a", b"--1"]


def test_side_stream_texts_decode_in_c_as_json_loads_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """The texts C reads itself (strings without escapes, short integers, true, false, null) and
    the ones it leaves to orjson, valid or not (escapes, control characters, bad UTF-8, leading
    zeros, floats, containers, cut texts) decode in C to the value or the error that the Python
    walk's _json.loads gives."""
    fm = _generate.fm
    model = Model(fm.Object(("a", "b"), [fm.Raw(), fm.Raw()], 1, 9), 5, 10)
    pure = python_walk(model)
    written = {}

    def put_raw(v: object, enc: object) -> None:  # the text a test value stands for
        data = written.get(v, _json.dumps(v)) if isinstance(v, str) else _json.dumps(v)
        for op in fm.code_length(len(data)):
            enc.put(*op)  # type: ignore[attr-defined]
        enc.put_bytes(data)  # type: ignore[attr-defined]

    monkeypatch.setattr(fm, "put_raw", put_raw)
    seen = []
    for j, text in enumerate(_SIDE_TEXTS):
        written[f"text {j}"] = text
        for value in ({"a": f"text {j}", "b": 1}, {"a": "x", "b": f"text {j}"}):
            payload = pure.encode(value)
            got = _outcome(model.decode, payload)
            assert got == _outcome(pure.decode, payload), text
            seen.append(got[0])
    assert "value" in seen and "error" in seen


def test_int_tables_find_their_entries_in_c_as_python_does() -> None:
    """A categorical's and a given rule's int entries, found through C's table where every key
    has 64 bits (and through the dict where one has more): hits at both ends of 64 bits, misses,
    ints past 64 bits looked up in a table of small ones, and True, 1.0 and "1" beside 1, in C
    as in Python."""
    fm = _generate.fm
    ints = [-(1 << 63), (1 << 63) - 1, 0, -1, 1, 5, 1000, 123456789012]
    for keys in (ints, [*ints, 1 << 70]):
        table = fm.Categorical.learn(keys * 3, fallback=fm.Raw())
        given = fm.Given(0, {fm.as_key(k): f"is {k}" for k in keys}, fm.Raw(), 1, 9)
        model = Model(fm.Object(("n", "g"), [table, given], 1, 9), 5, 10)
        probes: list[object] = [*ints, 1 << 64, -(1 << 64), 1 << 70, 2, True, False, 1.0, "1", None]
        values: list[object] = [{"n": n, "g": f"is {n}"} for n in probes] + [{"n": n, "g": 0} for n in probes]
        assert_same_walk(model, values, random.Random(len(keys)))


def test_a_side_text_past_the_value_bound_is_refused_in_c_as_in_python() -> None:
    """A string in the side stream of over 2 * MAX_VALUES bytes, all commas, is a text that
    _json.loads refuses for the values it may hold (the payload's DecodeError): the C walk
    refuses it too (texts of 2^20 bytes or more are _json.loads's, not read in C)."""
    fm = _generate.fm
    model = Model(fm.Object(("a",), [fm.Raw()], 1, 9), 5, 10)
    pure = python_walk(model)
    value = {"a": "," * (2 * MAX_VALUES + 1)}
    payload = pure.encode(value)
    assert model.encode(value) == payload
    got = _outcome(model.decode, payload)
    assert got == _outcome(pure.decode, payload) == ("error", DecodeError)  # "may hold more than ... values"
