// Conformance: every golden vector in spec/vectors, decoded by this package exactly as the
// spec says (valid ones to their serialization and value, invalid ones to the named error).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import * as zeroc from "../dist/index.js";

const VECTORS = new URL("../../spec/vectors/", import.meta.url);
const bytes = (name) => new Uint8Array(readFileSync(new URL(name, VECTORS)));
// Read with the package's exact parser: JSON.parse would round the vectors' big integers.
const vectors = (name) => zeroc.parseJSON(bytes(name));
const fromHex = (h) => new Uint8Array(Buffer.from(h, "hex"));

const dictionaries = new Map();
async function dictionary(name) {
  if (name === null || name === undefined) return null;
  if (!dictionaries.has(name)) dictionaries.set(name, await zeroc.Dictionary.fromBytes(bytes(name)));
  return dictionaries.get(name);
}

function serialization(v) {
  if (v.serialization_repeat) {
    const unit = fromHex(v.serialization_repeat.hex);
    const out = new Uint8Array(unit.length * v.serialization_repeat.times);
    for (let i = 0; i < v.serialization_repeat.times; i++) out.set(unit, i * unit.length);
    return out;
  }
  return fromHex(v.serialization_hex);
}

function rejects(fn, error) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof zeroc[error], `expected ${error}, got ${e.name}: ${e.message}`);
    return true;
  });
}

const frames = vectors("vectors.json");

for (const v of frames.valid) {
  test(`valid frame ${v.name}`, async () => {
    const decoder = new zeroc.Decoder(await dictionary(v.dictionary));
    assert.deepEqual(decoder.decodePayload(fromHex(v.frame_hex)), serialization(v));
    if (v.input !== null) assert.deepEqual(decoder.decode(fromHex(v.frame_hex)), v.input);
  });
}

const sessionDocs = [vectors("sessions-1.json"), vectors("sessions-2.json")];
const streams = [...frames.streams, ...vectors("streams-2.json").streams, ...sessionDocs.flatMap((d) => d.streams)];
for (const v of streams) {
  test(`valid stream ${v.name}`, async () => {
    const decoder = new zeroc.Decoder(await dictionary(v.dictionary));
    assert.deepEqual(decoder.decodeStream(fromHex(v.stream_hex)), v.inputs);
  });
}

for (const v of sessionDocs.flatMap((d) => d.sessions)) {
  test(`valid session ${v.name}`, async () => {
    const session = new zeroc.Decoder(await dictionary(v.dictionary)).sessionDecoder({ checksum: v.checksum });
    v.records_hex.forEach((record, i) => assert.deepEqual(session.decodeMany(fromHex(record)), v.batches[i]));
  });
}

const invalid = [...frames.invalid, ...vectors("streams-2.json").invalid, ...sessionDocs.flatMap((d) => d.invalid)];
for (const v of invalid) {
  test(`invalid ${v.kind} ${v.name} raises ${v.error}`, async () => {
    const decoder = new zeroc.Decoder(await dictionary(v.dictionary));
    const data = fromHex(v.data_hex);
    rejects(() => (v.kind === "stream" ? decoder.decodeStreamPayloads(data) : decoder.decodePayload(data)), v.error);
  });
}

test("session decoder refuses records after an error until one resets", async () => {
  const v = vectors("sessions-1.json").sessions[0];
  const session = new zeroc.Decoder(await dictionary(v.dictionary)).sessionDecoder();
  const records = v.records_hex.map(fromHex);
  session.decodeMany(records[0]);
  const broken = records[1].slice(0, records[1].length - 1);
  assert.throws(() => session.decodeMany(broken), zeroc.DecodeError);
  rejects(() => session.decodeMany(records[1]), "DecodeError");
  assert.deepEqual(session.decodeMany(records[0]), v.batches[0]);
});

test("dictionary files verify their hash, identity and metadata", async () => {
  const good = bytes("product_view-4k.zcd");
  const d = await zeroc.Dictionary.fromBytes(good);
  assert.equal(d.serialization, "protobuf");
  assert.equal(d.id, d.metadata.sha256);
  for (const at of [0, 4, 5, 20, good.length - 40, good.length - 1]) {
    const bad = good.slice();
    bad[at] ^= 1;
    await assert.rejects(zeroc.Dictionary.fromBytes(bad), zeroc.InvalidDictionary);
  }
  await assert.rejects(zeroc.Dictionary.fromBytes(good.subarray(0, good.length - 1)), zeroc.InvalidDictionary);
  const longer = new Uint8Array(good.length + 1);
  longer.set(good);
  await assert.rejects(zeroc.Dictionary.fromBytes(longer), zeroc.InvalidDictionary);
});

const containers = vectors("containers.json");
for (const v of containers.valid) {
  test(`valid container ${v.file}`, () => {
    const table = zeroc.Table.open(bytes(v.file));
    assert.deepEqual(table.document(), containers.document);
    const rows = containers.document[table.path[0]];
    assert.equal(table.length, rows.length);
    assert.deepEqual(table.rows(5, 19), rows.slice(5, 19));
    assert.deepEqual(table.rows(-3), rows.slice(-3));
    const columns = table.columns(7, 20);
    assert.deepEqual(Array.from(columns.price), rows.slice(7, 20).map((r) => r.price));
    assert.ok(columns.price instanceof Float64Array && columns.id instanceof Float64Array);
  });
}
const portable = vectors("containers-portable.json");
for (const v of portable.valid) {
  test(`valid portable container ${v.file}: rows, ranges, typed columns`, () => {
    const table = zeroc.Table.open(bytes(v.file));
    const rows = portable.document.rows;
    assert.deepEqual(table.document(), portable.document);
    assert.deepEqual(table.rows(390, 410), rows.slice(390, 410));
    const columns = table.columns(350, 450, { timestamps: true });
    assert.ok(columns.t instanceof Float64Array && columns.price instanceof Float64Array);
    assert.deepEqual(Array.from(columns.t), rows.slice(350, 450).map((r) => Date.parse(r.t)));
    assert.deepEqual(Array.from(columns.price), rows.slice(350, 450).map((r) => r.price));
    assert.deepEqual(Array.from(columns.volume), rows.slice(350, 450).map((r) => r.volume));
    assert.deepEqual(Array.from(columns.up), rows.slice(350, 450).map((r) => (r.up ? 1 : 0)));
    assert.deepEqual(table.columns(0, 3).t, rows.slice(0, 3).map((r) => r.t));
  });
}

const stamped = vectors("containers-stamps.json");
for (const v of stamped.valid) {
  test(`valid stamp container ${v.file}: times written back as they came, or as epoch milliseconds`, () => {
    const table = zeroc.Table.open(bytes(v.file));
    const rows = stamped.document.rows;
    assert.deepEqual(table.document(), stamped.document);
    const columns = table.columns(0, undefined, { timestamps: true });
    assert.deepEqual(Array.from(columns.created_at), rows.map((r) => Date.parse(r.created_at)));
    assert.deepEqual(Array.from(columns.sent), rows.map((r) => Date.parse(r.sent)));
  });
}

const mapped = vectors("containers-maps.json");
for (const v of mapped.valid) {
  test(`valid map container ${v.file}: maps and sparse tables, whole and by range`, () => {
    const table = zeroc.Table.open(bytes(v.file));
    assert.deepEqual(table.document(), mapped.document);
    assert.deepEqual(table.rows(50, 60), mapped.document.rows.slice(50, 60));
  });
}

const compacted = vectors("containers-compact.json");
for (const v of compacted.valid) {
  test(`valid compact-head container ${v.file}: every portable column kind, whole, by range, as columns`, () => {
    const table = zeroc.Table.open(bytes(v.file));
    const rows = compacted.document.rows;
    assert.deepEqual(table.document(), compacted.document);
    assert.deepEqual(table.rows(100, 140), rows.slice(100, 140));
    assert.deepEqual(Array.from(table.columns(0, 10).price), rows.slice(0, 10).map((r) => r.price));
  });
}

const referred = vectors("containers-refs.json");
for (const v of referred.valid) {
  test(`valid reference-column container ${v.file}: references to an earlier column, whole and by range`, () => {
    const table = zeroc.Table.open(bytes(v.file));
    const rows = referred.document.rows;
    assert.deepEqual(table.document(), referred.document);
    for (const [a, b] of [[0, 1], [150, 155], [299, 300]]) assert.deepEqual(table.rows(a, b), rows.slice(a, b));
  });
}
for (const v of referred.invalid) {
  test(`invalid reference container ${v.file} raises ${v.error}`, () => rejects(() => zeroc.Table.open(bytes(v.file)).document(), v.error));
}

const coded = vectors("containers-ints.json");
for (const v of coded.valid) {
  if (v.portable) {
    test(`valid integer-code container ${v.file}: values in 1, 2 or 4 bytes, whole, by range, as columns`, () => {
      const table = zeroc.Table.open(bytes(v.file));
      const rows = coded.document.rows;
      assert.deepEqual(table.document(), coded.document);
      assert.deepEqual(table.rows(390, 400), rows.slice(390, 400));
      assert.deepEqual(Array.from(table.columns(0, 400).user), rows.map((r) => r.user));
    });
  } else {
    test(`container ${v.file} with brotli payloads raises UnsupportedFrame, naming the portable profile`, () => {
      assert.throws(() => zeroc.Table.open(bytes(v.file)).rows(0, 1), /brotli column payload.*portable profile/);
    });
  }
}

const documented = vectors("containers-document.json");
for (const v of documented.valid) {
  test(`valid document-block container ${v.file}: one block, the first chunk and the skeleton`, () => {
    const table = zeroc.Table.open(bytes(v.file));
    const rows = documented.document.patterns;
    assert.deepEqual(table.document(), documented.document);
    assert.equal(table.length, rows.length);
    assert.deepEqual(table.rows(5, 12), rows.slice(5, 12));
    assert.deepEqual(table.rows(-1), rows.slice(-1));
    const columns = table.columns(0, 10);
    assert.ok(columns.rows instanceof Float64Array);
    assert.deepEqual(Array.from(columns.rows), rows.slice(0, 10).map((r) => r.rows));
  });
}
for (const v of documented.invalid) {
  test(`invalid document-block container ${v.file} raises ${v.error}`, () => rejects(() => zeroc.Table.open(bytes(v.file)).document(), v.error));
}

const footed = vectors("containers-footer.json");
for (const v of footed.valid) {
  test(`valid compact-footer container ${v.file}: chunks, a skeleton, a chunk appended after it`, () => {
    const table = zeroc.Table.open(bytes(v.file));
    const rows = footed.document.rows;
    assert.deepEqual(table.document(), footed.document);
    assert.equal(table.length, rows.length);
    assert.deepEqual(table.rows(28, 33), rows.slice(28, 33));
  });
}
for (const v of footed.invalid) {
  test(`invalid compact-footer container ${v.file} raises ${v.error}`, () => rejects(() => zeroc.Table.open(bytes(v.file)).document(), v.error));
}

// Brotli block texts are only in files that are not portable; this package has no brotli decoder.
const brotlied = vectors("containers-brotli.json");
for (const v of brotlied.valid) {
  test(`container ${v.file} with brotli block texts raises UnsupportedFrame, naming the portable profile`, () => {
    rejects(() => zeroc.Table.open(bytes(v.file)).document(), "UnsupportedFrame");
    assert.throws(() => zeroc.Table.open(bytes(v.file)).rows(0, 1), /portable profile/);
  });
}

// The value stream is only in files that are not portable: its blocks are brotli texts here, and
// a head naming one raises UnsupportedFrame wherever the text is zstd's.
const streamed = vectors("containers-stream.json");
for (const v of streamed.valid) {
  test(`container ${v.file} with a value stream raises UnsupportedFrame, naming the portable profile`, () => {
    rejects(() => zeroc.Table.open(bytes(v.file)).document(), "UnsupportedFrame");
  });
}
test("a compact head with a value stream raises UnsupportedFrame, naming the portable profile", async () => {
  const { readHead } = await import("../dist/head.js");
  assert.throws(() => readHead({ r: { i: "v" }, v: 1 }), /value stream.*portable profile/);
  assert.throws(() => readHead({ r: { i: [1] }, x: 1 }), /more than its root/);
});

test("ranges that start and end anywhere in a chunk build the rows that slicing the whole gives", () => {
  // Maps, sparse tables, arrays, tagged columns and derived ones, read in part (decodeRows).
  for (const [set, v] of [[mapped, mapped.valid[0]], [compacted, compacted.valid[0]], [referred, referred.valid[0]]]) {
    const table = zeroc.Table.open(bytes(v.file));
    const rows = set.document.rows;
    for (let a = 0; a < rows.length; a += 37) {
      for (const b of [a, a + 1, a + 5, a + 64, a + 300]) assert.deepEqual(table.rows(a, b), rows.slice(a, b), `rows ${a}..${b}`);
    }
  }
});

for (const v of containers.invalid) {
  test(`invalid container ${v.file} raises ${v.error}`, () => rejects(() => zeroc.Table.open(bytes(v.file)).document(), v.error));
}

// Learned-model payloads of every model format: 1-5 (the exact coder, format 5 in blocks) and
// 6-8 (the range coder).
for (const name of ["learned.json", "learned-2.json", "learned-3.json", "learned-4.json", "learned-5.json", "learned-6.json", "learned-7.json", "learned-8.json"]) {
  const set = vectors(name);
  for (const v of set.valid) {
    test(`${name} valid ${v.name}`, async () => {
      const decoder = new zeroc.Decoder(await dictionary(set.dictionary));
      const frame = fromHex(v.frame_hex);
      const value = v.codec?.frame_id === "bare" ? decoder.decodeBare(frame) : decoder.decode(frame);
      assert.deepEqual(value, v.input);
    });
  }
  for (const v of set.invalid) {
    test(`${name} invalid ${v.name} raises ${v.error}`, async () => {
      const decoder = new zeroc.Decoder(await dictionary(set.dictionary));
      const frame = fromHex(v.frame_hex);
      rejects(() => (v.bare ? decoder.decodeBare(frame) : decoder.decode(frame)), v.error);
    });
  }
}
