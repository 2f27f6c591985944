// Decode what a test wrote (tests/test_js.py) and report, as JSON on stdout:
//   node scripts/decode-cases.mjs cases.json
// cases.json may hold:
// - "cases": [{"codec": "zstd" | "deflate", "dictionary", "data_hex", "content_hex"}] with
//   "dictionaries": {name: hex}: each must decode to its content exactly; with "fuzz":
//   {"seed", "rounds"}, each is also corrupted (bit flips, cuts, spliced bytes) `rounds` times,
//   and every corruption must either decode or throw one of the package's errors.
// - "frames": [{"dictionary", "frame_hex", "payload_hex", "bare"?}], "sessions": [{"dictionary",
//   "checksum", "records_hex"}] and "streams": [{"dictionary", "stream_hex"}] with "zcd": {name:
//   hex} (dictionary files): each decodes (a frame to its payload), and its values are reported
//   in a canonical form for the test to compare.
// - "tables": [{"file_hex", "ranges": [[start, stop], ...]}] (.zct files): the document, the
//   rows of each range and its columns, reported in the canonical form.
// - "hostile_tables": [hex] (.zct files a forger made): each must open and read whole, as
//   columns and rows 1..3, or throw one of the package's errors; "hostile" says of each whether it threw.
// With "fuzz", frames (and their payloads, through the serialization's reader), tables and the
// dictionary files are corrupted too, and must decode or throw one of the package's errors.

import { readFileSync } from "node:fs";
import * as zeroc from "../dist/index.js";
import { inflateRaw } from "../dist/inflate.js";
import { canon } from "./canon.mjs";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const fromHex = (h) => new Uint8Array(Buffer.from(h, "hex"));
const dictionaries = new Map(Object.entries(spec.dictionaries ?? {}).map(([k, v]) => [k, new zeroc.ZstdDictionary(fromHex(v))]));
const failures = [];
let decoded = 0;
let corrupted = 0;
let rejected = 0;

const equal = (a, b) => a.length === b.length && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

let state = spec.fuzz?.seed ?? 1;
const random = () => {
  state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
  return state / 4294967296;
};

function corrupt(data) {
  const d = data.slice();
  const kind = Math.floor(random() * 4);
  if (kind === 0) {
    const n = 1 + Math.floor(random() * 3);
    for (let i = 0; i < n; i++) d[Math.floor(random() * d.length)] ^= 1 << Math.floor(random() * 8);
    return d;
  }
  if (kind === 1) return d.subarray(0, Math.floor(random() * d.length));
  if (kind === 2) {
    const at = Math.floor(random() * d.length);
    for (let i = at; i < Math.min(d.length, at + 8); i++) d[i] = Math.floor(random() * 256);
    return d;
  }
  const at = Math.floor(random() * d.length);
  const extra = Uint8Array.from({ length: 1 + Math.floor(random() * 16) }, () => Math.floor(random() * 256));
  const out = new Uint8Array(d.length + extra.length);
  out.set(d.subarray(0, at));
  out.set(extra, at);
  out.set(d.subarray(at), at + extra.length);
  return out;
}

function decompress(c, data, dictionary, maxSize) {
  if (c.codec === "deflate") return inflateRaw(data, dictionary === null ? null : dictionary.content.subarray(-32768), maxSize);
  return zeroc.zstdDecompress(data, { dictionary, maxSize });
}

const zcd = new Map();
for (const [name, h] of Object.entries(spec.zcd ?? {})) zcd.set(name, await zeroc.Dictionary.fromBytes(fromHex(h)));
const values = [];
for (const [i, f] of (spec.frames ?? []).entries()) {
  const decoder = new zeroc.Decoder(f.dictionary ? zcd.get(f.dictionary) : null);
  try {
    const frame = fromHex(f.frame_hex);
    if (f.bare) {
      decoded++; // a learned payload alone: its value is the check
      values.push(canon(decoder.decodeBare(frame)));
      continue;
    }
    if (!equal(decoder.decodePayload(frame), fromHex(f.payload_hex))) failures.push({ frame: i, problem: "payload differs" });
    else decoded++;
    values.push(canon(decoder.decode(frame)));
  } catch (e) {
    failures.push({ frame: i, problem: `${e.name}: ${e.message}` });
    values.push(null);
  }
  fuzz(`frame ${i}`, fromHex(f.frame_hex), (bad) => decoder.decode(bad));
  fuzz(`payload ${i}`, fromHex(f.payload_hex), (bad) => decoder.value(bad));
}
for (const [name, h] of Object.entries(spec.zcd ?? {})) {
  for (let r = 0; r < (spec.fuzz?.rounds ?? 0); r++) {
    corrupted++;
    try {
      await zeroc.Dictionary.fromBytes(corrupt(fromHex(h)));
    } catch (e) {
      if (e instanceof zeroc.ZerocError) rejected++;
      else failures.push({ dictionary: name, round: r, problem: `${e.name}: ${e.message}` });
    }
  }
}
const sessions = [];
for (const [i, s] of (spec.sessions ?? []).entries()) {
  const session = new zeroc.Decoder(s.dictionary ? zcd.get(s.dictionary) : null).sessionDecoder({ checksum: s.checksum });
  try {
    sessions.push(s.records_hex.map((r) => session.decodeMany(fromHex(r)).map(canon)));
    decoded++;
  } catch (e) {
    failures.push({ session: i, problem: `${e.name}: ${e.message}` });
    sessions.push(null);
  }
}

const streams = [];
for (const [i, s] of (spec.streams ?? []).entries()) {
  try {
    streams.push(new zeroc.Decoder(s.dictionary ? zcd.get(s.dictionary) : null).decodeStream(fromHex(s.stream_hex)).map(canon));
    decoded++;
  } catch (e) {
    failures.push({ stream: i, problem: `${e.name}: ${e.message}` });
    streams.push(null);
  }
}

/** Corrupt `data` the fuzz's rounds of times; `use` must return or throw a Zeroc error. */
function fuzz(what, data, use) {
  for (let r = 0; r < (spec.fuzz?.rounds ?? 0); r++) {
    const bad = corrupt(data);
    corrupted++;
    try {
      use(bad);
    } catch (e) {
      if (e instanceof zeroc.ZerocError) rejected++;
      else failures.push({ what, round: r, problem: `${e.name}: ${e.message}`, data_hex: Buffer.from(bad).toString("hex").slice(0, 400) });
    }
  }
}

/** A column as a list: typed arrays spread, booleans (Uint8Array) as true and false. */
const listed = (col) => (col instanceof Uint8Array ? Array.from(col, (b) => b === 1) : Array.from(col));
const tables = [];
for (const [i, t] of (spec.tables ?? []).entries()) {
  try {
    const table = zeroc.Table.open(fromHex(t.file_hex));
    const ranges = t.ranges.map(([a, b]) => ({
      rows: canon(table.rows(a, b)),
      columns: Object.entries(table.columns(a, b)).map(([k, col]) => [k, canon(listed(col))]),
    }));
    tables.push({ document: canon(table.document()), ranges });
    decoded++;
  } catch (e) {
    failures.push({ table: i, problem: `${e.name}: ${e.message}` });
    tables.push(null);
  }
  fuzz(`table ${i}`, fromHex(t.file_hex), (bad) => {
    const table = zeroc.Table.open(bad, { maxValues: 1 << 20 });
    table.document();
    table.columns(0, undefined, { timestamps: true });
    table.rows(1, 3);
  });
}

const hostile = [];
for (const [i, h] of (spec.hostile_tables ?? []).entries()) {
  try {
    const table = zeroc.Table.open(fromHex(h), { maxValues: 1 << 20 });
    table.document();
    table.columns(0, undefined, { timestamps: true });
    table.rows(1, 3); // part of a chunk: only those rows built
    hostile.push(false);
  } catch (e) {
    if (e instanceof zeroc.ZerocError) hostile.push(true);
    else failures.push({ hostile: i, problem: `${e.name}: ${e.message}`, data_hex: h.slice(0, 400) });
  }
}

for (const [i, c] of (spec.cases ?? []).entries()) {
  const dictionary = c.dictionary ? dictionaries.get(c.dictionary) : null;
  const data = fromHex(c.data_hex);
  const want = fromHex(c.content_hex);
  try {
    const got = decompress(c, data, dictionary, 64 << 20);
    if (!equal(got, want)) failures.push({ case: i, problem: `decoded ${got.length} bytes that differ from the ${want.length} expected` });
    else decoded++;
  } catch (e) {
    failures.push({ case: i, problem: `${e.name}: ${e.message}` });
  }
  for (let r = 0; r < (spec.fuzz?.rounds ?? 0); r++) {
    const bad = corrupt(data);
    corrupted++;
    try {
      const got = decompress(c, bad, dictionary, 1 << 22);
      if (got.length > 1 << 22) failures.push({ case: i, round: r, problem: "decoded past the limit" });
    } catch (e) {
      if (e instanceof zeroc.ZerocError) rejected++;
      else failures.push({ case: i, round: r, problem: `${e.name}: ${e.message}`, data_hex: Buffer.from(bad).toString("hex").slice(0, 400) });
    }
  }
}
console.log(JSON.stringify({ decoded, corrupted, rejected, hostile, values, sessions, streams, tables, failures: failures.slice(0, 20), failed: failures.length }));
