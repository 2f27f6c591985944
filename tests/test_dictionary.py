"""Dictionary files: verified on load, every corruption is an InvalidDictionary."""

import hashlib
import json
from pathlib import Path

import pytest

import zeroc
from zeroc import Codec, Dictionary, InvalidDictionary


def test_save_load_round_trip(workload_dicts: dict[str, Dictionary], tmp_path: Path) -> None:
    d = workload_dicts["order"]
    path = d.save(tmp_path / "order.zcd")
    back = Dictionary.load(path)
    assert back == d
    assert back.short_id == int.from_bytes(d.digest[:2], "little")
    # "size" chose the learned model: the identity covers the content and the model section.
    assert d.codec["method"] == "learned" and d.model is not None and path.read_bytes()[4] == 2
    assert back.id == hashlib.sha256(d.sha256 + hashlib.sha256(d.model).digest()).hexdigest()
    assert d.sha256 == hashlib.sha256(d.content).digest()  # what dcz names
    assert back.schema is not None and back.schema["message"] == "zeroc.workloads.Order"
    assert back.serialization == "protobuf" and back.samples == 5000


def test_every_flipped_byte_is_rejected(json_dict: Dictionary) -> None:
    data = json_dict.to_bytes()
    step = max(1, len(data) // 400)
    for i in range(0, len(data), step):
        corrupt = bytearray(data)
        corrupt[i] ^= 0x40
        with pytest.raises(InvalidDictionary):
            Dictionary.from_bytes(bytes(corrupt))


def test_every_truncation_is_rejected(json_dict: Dictionary) -> None:
    data = json_dict.to_bytes()
    for n in list(range(0, 64)) + list(range(64, len(data), 97)):
        with pytest.raises(InvalidDictionary):
            Dictionary.from_bytes(data[:n])
    with pytest.raises(InvalidDictionary):
        Dictionary.from_bytes(data + b"\x00")


def _rewrite(d: Dictionary, **changes: object) -> bytes:
    """A well-formed file (valid hashes) whose metadata says something invalid."""
    import hashlib

    meta = {**d.metadata(), **changes}
    raw = json.dumps(meta).encode()
    body = (
        b"ZRCD\x01\x00\x00\x00"
        + len(raw).to_bytes(4, "little")
        + raw
        + len(d.content).to_bytes(4, "little")
        + d.content
    )
    return body + hashlib.sha256(body).digest()


@pytest.mark.parametrize(
    "changes",
    [
        {"sha256": "00" * 32},
        {"codec": {"method": "lzma", "level": 1}},
        {"serialization": "xml"},
        {"samples": "many"},
        {"schema": {"message": "x"}},
    ],
)
def test_invalid_metadata_is_rejected(json_dict: Dictionary, changes: dict[str, object]) -> None:
    assert Dictionary.from_bytes(_rewrite(json_dict)) == json_dict
    with pytest.raises(InvalidDictionary):
        Dictionary.from_bytes(_rewrite(json_dict, **changes))


def test_load_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidDictionary, match="cannot read"):
        Dictionary.load(tmp_path / "nope.zcd")


def test_store_ignores_other_files_and_rejects_ambiguity(json_dict: Dictionary, tmp_path: Path) -> None:
    store = zeroc.DictionaryStore(tmp_path)
    (tmp_path / "notes.txt").write_text("hi")
    store.add(json_dict)
    assert store.ids() == [json_dict.id]
    assert list(store) == [json_dict]
    with pytest.raises(zeroc.UnknownDictionary):
        store.get("")


def test_a_dictionary_whose_zstd_tables_are_corrupt_is_invalid() -> None:
    """Hostile input (../shared/repro): a .zcd that from_bytes accepts, whose zstd dictionary
    content has the zstd magic and corrupt entropy tables; ``Codec(d)`` raised zstandard's own
    ZstdError. It is an InvalidDictionary now."""
    zcd = bytes.fromhex(
        "5a52434401000000f10000007b22666f726d6174223a312c2273657269616c697a6174696f6e223a226a736f6e22"
        "2c22736368656d61223a6e756c6c2c22636f646563223a7b226d6574686f64223a227a737464222c226c6576656c"
        "223a337d2c22707265666572656e6365223a2273697a65222c2263726561746564223a22222c2273616d706c6573"
        "223a302c2276616c69646174696f6e223a7b7d2c227a65726f635f76657273696f6e223a22222c22736861323536"
        "223a2239653361663965306337626637333338383633356365333534636233316634396266623235653761613333"
        "373630643335313538316664626239623639333132227d4800000037a430ec010000000000000000000000000000"
        "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000089b80bd3c6c451ff8a241b19862f81ca2718f46b4413cef1a655197ea862a6fd"
    )
    d = Dictionary.from_bytes(zcd)
    with pytest.raises(InvalidDictionary, match="does not load"):
        Codec(d)
