// Column blocks and the .zct container (spec/TABULAR_FORMAT.md): rows, a row range, the whole
// document, and numeric columns straight into typed arrays. pcodec and brotli have no decoder
// here: a `pco` column or a brotli block text raises UnsupportedFrame, and files written for
// browsers use the portable profile (`zeroc pack --portable`): zstd throughout.

import { crc32 } from "./crc32.js";
import { ChecksumMismatch, DecodeError, LimitExceeded, UnsupportedFrame } from "./errors.js";
import { readVarint } from "./frame.js";
import { readHead } from "./head.js";
import { parseJSON, parseJSONText } from "./json.js";
import { safeInt, setKey, urlQuote } from "./values.js";
import { zstdDecompress } from "./zstd.js";

const MAGIC = [0x5a, 0x52, 0x43, 0x54]; // "ZRCT"
const TRAILERS: Record<number, number> = { 1: 8, 2: 12 };
const MAX_FOOTER = 64 * 1024 * 1024;
export const MAX_VALUES = 1 << 22; // values a column may hold, and the bytes of a block's head and text
export const MAX_BUILT = 1 << 22; // values one block may build, all columns together
const MAX_SCALE = 9;
const TWO32 = 4294967296;
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** A value absent from an object of a table with several shapes. */
const MISSING = Symbol("missing");

type Head = Record<string, unknown>;
/** An integer column: numbers while every value is a safe integer, else BigInts. */
type Ints = Float64Array | BigInt64Array;

function fail(what: string): never {
  throw new DecodeError(`malformed block: ${what}`);
}

function obj(v: unknown, what: string): Head {
  if (typeof v !== "object" || v === null || Array.isArray(v)) fail(`${what} is not an object`);
  return v as Head;
}

/** A head integer as the signed 64-bit value it must be. */
function i64(v: unknown, what: string): bigint {
  const b = typeof v === "bigint" ? v : typeof v === "number" && Number.isInteger(v) ? BigInt(v) : null;
  if (b === null || b < -(1n << 63n) || b >= 1n << 63n) throw new DecodeError(`${what} is not a 64-bit integer`);
  return b;
}

/** UTF-8 with surrogates passed through (the writer's "surrogatepass"): lone ones survive. */
export function utf8Pass(b: Uint8Array): string {
  try {
    return UTF8.decode(b);
  } catch {
    // Only text holding encoded surrogates (ED A0..BF xx) gets here.
  }
  let out = "";
  let i = 0;
  while (i < b.length) {
    const c = b[i];
    let cp: number;
    let n: number;
    if (c < 0x80) [cp, n] = [c, 1];
    else if (c >= 0xc2 && c < 0xe0) [cp, n] = [c & 0x1f, 2];
    else if (c >= 0xe0 && c < 0xf0) [cp, n] = [c & 0x0f, 3];
    else if (c >= 0xf0 && c < 0xf5) [cp, n] = [c & 0x07, 4];
    else fail("text is not UTF-8");
    if (i + n > b.length) fail("text ends inside a UTF-8 sequence");
    for (let k = 1; k < n; k++) {
      if ((b[i + k] & 0xc0) !== 0x80) fail("text is not UTF-8");
      cp = (cp << 6) | (b[i + k] & 0x3f);
    }
    if ((n === 3 && cp < 0x800) || (n === 4 && (cp < 0x10000 || cp > 0x10ffff))) fail("text is not UTF-8");
    out += String.fromCodePoint(cp);
    i += n;
  }
  return out;
}

/** What decoding a block reads from: payloads in order, the text pool, the value budget. */
class Reader {
  pos = 4;
  poolPos = 0;
  budget: number;
  /** The block's string columns so far, in head order, which a later one may refer to (§1.2 `ref`). */
  readonly sources: string[][] = [];

  constructor(
    readonly data: Uint8Array,
    readonly pool: Uint8Array,
    readonly limit: number,
    readonly maxBuilt: number,
  ) {
    this.budget = maxBuilt;
  }

  spend(n: number): void {
    this.budget -= n;
    if (this.budget < 0) throw new LimitExceeded(`the block would build more than ${this.maxBuilt} values (max_values)`);
  }

  take(head: Head): Uint8Array {
    const n = head.len ?? 0;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || this.pos + n > this.data.length) {
      fail("column payload runs past the block");
    }
    const out = this.data.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  text(size: unknown): Uint8Array {
    if (typeof size !== "number" || !Number.isInteger(size) || size < 0 || this.poolPos + size > this.pool.length) {
      fail("string text runs past the block's pool");
    }
    const out = this.pool.subarray(this.poolPos, this.poolPos + size);
    this.poolPos += size;
    return out;
  }

  unzstd(payload: Uint8Array, limit: number): Uint8Array {
    if (payload[0] === 0x62) {
      // A brotli payload (spec/TABULAR_FORMAT.md §1.2), which only files that are not portable hold.
      throw new UnsupportedFrame("a brotli column payload: write the file with the portable profile to read it here");
    }
    return zstdDecompress(payload, { maxSize: limit });
  }
}

// --- typed encodings ---------------------------------------------------------------------------

function decodeInts(head: Head, payload: Uint8Array, n: number, r: Reader): Ints {
  const enc = head.enc;
  if (enc === "empty") return new Float64Array(0);
  if (enc === "const") return fill(i64(head.value, "a constant column's value"), n);
  if (enc === "series") {
    const start = i64(head.start, "a series' start");
    const step = i64(head.step, "a series' step");
    if (n && (start + step * BigInt(n - 1) < -(1n << 63n) || start + step * BigInt(n - 1) >= 1n << 63n)) {
      throw new DecodeError("an integer series runs past 64 bits");
    }
    const s = Number(start);
    const d = Number(step);
    const last = s + d * (n - 1);
    if (Number.isSafeInteger(s) && Number.isSafeInteger(d) && Number.isSafeInteger(last)) {
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) out[i] = s + d * i;
      return out;
    }
    const out = new BigInt64Array(n);
    for (let i = 0; i < n; i++) out[i] = start + step * BigInt(i);
    return out;
  }
  if (enc === "inline") {
    const values = head.values;
    if (!Array.isArray(values) || values.length !== n) throw new DecodeError("inline integer column has the wrong length");
    const big = values.map((v) => i64(v, "an inline integer"));
    return fromBig(big);
  }
  if (enc === "pco") {
    throw new UnsupportedFrame("a pco (pcodec) column: write the file with the portable profile to read it here");
  }
  if (enc === "zstd-delta") {
    const raw = r.unzstd(payload, n * 8);
    if (raw.length !== n * 8) throw new DecodeError(`integer column holds ${raw.length / 8} values, expected ${n}`);
    return cumsum(raw, n);
  }
  if (enc === "zstd-narrow") {
    const width = head.width;
    if ((width !== 1 && width !== 2 && width !== 4) || n < 1) throw new DecodeError(`narrow integer column of width ${String(width).slice(0, 20)} and ${n} values`);
    const first = i64(head.first, "a narrow column's first value");
    const raw = r.unzstd(payload, (n - 1) * width);
    if (raw.length !== (n - 1) * width) throw new DecodeError(`integer column holds ${raw.length / width + 1} values, expected ${n}`);
    return narrowSum(first, raw, width, n);
  }
  if (enc === "zstd-bytes") {
    const width = head.width;
    if (width !== 1 && width !== 2 && width !== 4) throw new DecodeError(`integer column of width ${String(width).slice(0, 20)}`);
    const raw = r.unzstd(payload, n * width);
    if (raw.length !== n * width) throw new DecodeError(`integer column holds ${raw.length / width} values, expected ${n}`);
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = width === 1 ? view.getInt8(i) : width === 2 ? view.getInt16(2 * i, true) : view.getInt32(4 * i, true);
    return out;
  }
  throw new DecodeError(`unknown integer encoding ${JSON.stringify(enc)}`);
}

function fill(v: bigint, n: number): Ints {
  if (v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)) return new Float64Array(n).fill(Number(v));
  return new BigInt64Array(n).fill(v);
}

function fromBig(values: bigint[]): Ints {
  const safe = values.every((v) => v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER));
  return safe ? Float64Array.from(values, Number) : BigInt64Array.from(values);
}

/** int64 LE deltas → values (wrapping as int64 does): in doubles while exact, else BigInts. */
function cumsum(raw: Uint8Array, n: number): Ints {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const out = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const lo = view.getUint32(8 * i, true);
    const hi = view.getInt32(8 * i + 4, true);
    if (hi < -0x200000 || hi >= 0x200000) return cumsumBig(view, n);
    sum += hi * TWO32 + lo;
    if (sum > Number.MAX_SAFE_INTEGER || sum < Number.MIN_SAFE_INTEGER) return cumsumBig(view, n);
    out[i] = sum;
  }
  return out;
}

function cumsumBig(view: DataView, n: number): Ints {
  const out = new BigInt64Array(n);
  let sum = 0n;
  for (let i = 0; i < n; i++) {
    sum = BigInt.asIntN(64, sum + view.getBigInt64(8 * i, true));
    out[i] = sum;
  }
  return fromBig(Array.from(out));
}

/** `first`, then the running sum of `width`-byte signed LE differences (wrapping as int64). */
function narrowSum(first: bigint, raw: Uint8Array, width: number, n: number): Ints {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const out = new Float64Array(n);
  let sum = Number(first);
  if (Number.isSafeInteger(sum) && Math.abs(sum) + (n - 1) * 2 ** (8 * width - 1) <= Number.MAX_SAFE_INTEGER) {
    // No sum can leave the doubles' exact integers: a loop per width, no test per value.
    out[0] = sum;
    if (width === 1) for (let i = 1; i < n; i++) out[i] = sum += view.getInt8(i - 1);
    else if (width === 2) for (let i = 1; i < n; i++) out[i] = sum += view.getInt16(2 * i - 2, true);
    else for (let i = 1; i < n; i++) out[i] = sum += view.getInt32(4 * i - 4, true);
    return out;
  }
  if (Number.isSafeInteger(sum)) {
    out[0] = sum;
    let ok = true;
    for (let i = 1; i < n && ok; i++) {
      const o = (i - 1) * width;
      sum += width === 1 ? view.getInt8(o) : width === 2 ? view.getInt16(o, true) : view.getInt32(o, true);
      out[i] = sum;
      ok = sum <= Number.MAX_SAFE_INTEGER && sum >= Number.MIN_SAFE_INTEGER;
    }
    if (ok) return out;
  }
  const big = new Array<bigint>(n);
  let b = first;
  big[0] = b;
  for (let i = 1; i < n; i++) {
    const o = (i - 1) * width;
    b = BigInt.asIntN(64, b + BigInt(width === 1 ? view.getInt8(o) : width === 2 ? view.getInt16(o, true) : view.getInt32(o, true)));
    big[i] = b;
  }
  return fromBig(big);
}

function decodeFloats(head: Head, payload: Uint8Array, n: number, r: Reader): Float64Array {
  const enc = head.enc;
  if (enc === "decimal") {
    const scale = head.scale;
    if (typeof scale !== "number" || !Number.isInteger(scale) || scale < 0 || scale > MAX_SCALE) {
      throw new DecodeError(`decimal scale ${String(scale).slice(0, 20)} is outside 0..${MAX_SCALE}`);
    }
    const ints = decodeInts(obj(head.ints, "a decimal's integers"), payload, n, r);
    const div = 10 ** scale;
    const out = new Float64Array(n);
    // numpy divides int64 by the float 10^k: the same correctly rounded quotient as here.
    for (let i = 0; i < n; i++) out[i] = Number(ints[i]) / div;
    return out;
  }
  if (enc === "inline") {
    const values = head.values;
    if (!Array.isArray(values) || values.length !== n) throw new DecodeError("inline float column has the wrong length");
    return Float64Array.from(values, (v) => {
      if (typeof v !== "string") fail("an inline float is not a string");
      const x = v === "nan" ? NaN : v === "inf" ? Infinity : v === "-inf" ? -Infinity : Number(v);
      if (Number.isNaN(x) && v !== "nan") fail(`bad inline float ${v.slice(0, 20)}`);
      return x;
    });
  }
  if (enc === "f64-zstd") {
    const raw = r.unzstd(payload, n * 8);
    if (raw.length !== n * 8) throw new DecodeError(`float column holds ${raw.length / 8} values, expected ${n}`);
    const out = new Float64Array(n);
    new Uint8Array(out.buffer).set(raw); // little-endian, as every browser is
    return out;
  }
  if (enc === "f64-pco") {
    throw new UnsupportedFrame("a pco (pcodec) column: write the file with the portable profile to read it here");
  }
  throw new DecodeError(`unknown float encoding ${JSON.stringify(enc)}`);
}

function decodeBools(head: Head, payload: Uint8Array, n: number, r: Reader): Uint8Array {
  if (head.enc === "const") return new Uint8Array(n).fill(head.value ? 1 : 0);
  if (head.enc === "inline") {
    const values = head.values;
    if (!Array.isArray(values) || values.length !== n) throw new DecodeError("inline boolean column has the wrong length");
    return Uint8Array.from(values, (v) => (v ? 1 : 0));
  }
  if (head.enc !== "bits") throw new DecodeError(`unknown boolean encoding ${JSON.stringify(head.enc)}`);
  const bits = r.unzstd(payload, (n + 7) >> 3);
  if (bits.length * 8 < n) throw new DecodeError("boolean column is short");
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (bits[i >> 3] >> (7 - (i & 7))) & 1;
  return out;
}

const UNITS: Record<string, number> = { D: 86_400_000, s: 1000, ms: 1, us: 0.001 };

/** A datetime column's integers as epoch milliseconds. */
function epochMs(unit: string, v: number | bigint): number {
  return unit === "us" ? Number(v) / 1000 : Number(v) * UNITS[unit];
}

function pad(v: number, width: number): string {
  return String(v).padStart(width, "0");
}

/** numpy's datetime_as_string for units D, s, ms and us (the writer kept only what it renders back). */
function isoString(unit: string, v: number | bigint, z: boolean): string {
  let ms: number;
  let micros = 0;
  if (unit === "us") {
    const b = BigInt(v);
    const m = b >= 0n ? b / 1000n : -((-b + 999n) / 1000n);
    ms = Number(m);
    micros = Number(b - m * 1000n);
  } else {
    ms = Number(v) * UNITS[unit];
  }
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) fail("a timestamp out of range");
  const y = d.getUTCFullYear();
  let s = `${y < 0 ? "-" + pad(-y, 4) : pad(y, 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
  if (unit !== "D") {
    s += `T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
    if (unit === "ms") s += `.${pad(d.getUTCMilliseconds(), 3)}`;
    if (unit === "us") s += `.${pad(d.getUTCMilliseconds(), 3)}${pad(micros, 3)}`;
  }
  return z ? s + "Z" : s;
}

const STAMP_UNITS: Record<string, number> = { s: 1, min: 60, D: 86_400 };
const STAMP_DIRECTIVE = /%[YmdeHMSba%]/g;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]; // Date.getUTCDay() order
const MIN_STAMP = -62_135_596_800; // 0001-01-01T00:00:00 UTC, in seconds
const MAX_STAMP = 253_402_300_799; // 9999-12-31T23:59:59 UTC

/** A `stamp` format written for the UTC time `seconds` after the epoch (spec §1.2). */
function renderStamp(format: string, seconds: number): string {
  if (!(seconds >= MIN_STAMP && seconds <= MAX_STAMP)) fail("a stamp outside years 1-9999");
  const t = new Date(seconds * 1000);
  return format.replace(STAMP_DIRECTIVE, (d) => {
    switch (d) {
      case "%Y":
        return pad(t.getUTCFullYear(), 4);
      case "%m":
        return pad(t.getUTCMonth() + 1, 2);
      case "%d":
        return pad(t.getUTCDate(), 2);
      case "%e":
        return String(t.getUTCDate());
      case "%H":
        return pad(t.getUTCHours(), 2);
      case "%M":
        return pad(t.getUTCMinutes(), 2);
      case "%S":
        return pad(t.getUTCSeconds(), 2);
      case "%b":
        return MONTHS[t.getUTCMonth()];
      case "%a":
        return WEEKDAYS[t.getUTCDay()];
      default:
        return "%";
    }
  });
}

function decodeStrings(head: Head, payload: Uint8Array, n: number, r: Reader): string[] {
  const enc = head.enc;
  if (enc === "empty") return [];
  if (enc === "stamp") {
    const { format, unit } = head;
    if (typeof format !== "string" || typeof unit !== "string" || !(unit in STAMP_UNITS) || format.replace(STAMP_DIRECTIVE, "").includes("%")) {
      throw new DecodeError(`stamp column of unit ${String(unit).slice(0, 20)} or format ${String(format).slice(0, 40)}`);
    }
    const scale = STAMP_UNITS[unit];
    const ints = decodeInts(obj(head.ints, "a stamp's integers"), payload, n, r);
    return Array.from(ints as ArrayLike<number | bigint>, (v) => renderStamp(format, Number(v) * scale));
  }
  if (enc === "const") {
    if (typeof head.value !== "string") fail("a constant string column's value is not a string");
    return new Array<string>(n).fill(head.value);
  }
  if (enc === "datetime") {
    const unit = head.unit as string;
    if (!(unit in UNITS)) throw new DecodeError(`unknown datetime unit ${JSON.stringify(unit)}`);
    const ints = decodeInts(obj(head.ints, "a datetime's integers"), payload, n, r);
    return Array.from(ints as ArrayLike<number | bigint>, (v) => isoString(unit, v, head.z === true));
  }
  if (enc === "prefix-int") {
    if (typeof head.prefix !== "string") fail("a prefix is not a string");
    const ints = decodeInts(obj(head.ints, "a prefix column's integers"), payload, n, r);
    return Array.from(ints as ArrayLike<number | bigint>, (v) => `${head.prefix}${v}`);
  }
  if (enc === "dict") {
    const table = obj(head.table, "a string dictionary");
    const codes = decodeInts(obj(head.codes, "a string dictionary's codes"), payload, n, r);
    const count = table.count ?? -1;
    // distinct values: no more than the column's (a forged count would size the table's lengths)
    if (typeof count !== "number" || !Number.isInteger(count) || count > n) throw new DecodeError("string dictionary has a bad size");
    const values = decodeStrings(table, new Uint8Array(0), count, r);
    const out = new Array<string>(n);
    for (let i = 0; i < n; i++) {
      const c = Number(codes[i]);
      if (!(c >= 0 && c < values.length)) throw new DecodeError("string dictionary codes out of range");
      out[i] = values[c];
    }
    return out;
  }
  if (enc === "ref") {
    const source = head.source;
    if (typeof source !== "number" || !Number.isInteger(source) || source < 0 || source >= r.sources.length) {
      throw new DecodeError("a reference column names no earlier string column");
    }
    const values = r.sources[source];
    const positions = decodeInts(obj(head.ints, "a reference column's positions"), payload, n, r);
    let misses = 0;
    for (let i = 0; i < n; i++) {
      const p = Number(positions[i]);
      if (!(p >= -1 && p < values.length)) throw new DecodeError("a reference points outside its source column");
      if (p === -1) misses++;
    }
    if ((head.text !== undefined) !== misses > 0) throw new DecodeError("a reference column's text does not match its misses");
    const missed = misses ? decodeStrings(obj(head.text, "a reference column's text"), new Uint8Array(0), misses, r) : [];
    if (missed.length !== misses) throw new DecodeError("a reference column's text holds the wrong number of values");
    const out = new Array<string>(n);
    let next = 0;
    for (let i = 0; i < n; i++) {
      const p = Number(positions[i]);
      out[i] = p >= 0 ? values[p] : missed[next++];
    }
    return out;
  }
  if (enc === "text") {
    const blob = r.text(head.size);
    if (head.lengths === undefined) {
      if (n === 0) return [];
      // Decoded whole, then split: in UTF-8 a 00 byte is only ever U+0000 (as _columns.py reads it).
      const items = utf8Pass(blob).split("\u0000");
      if (n >= 0 && items.length !== n) throw new DecodeError("string column holds the wrong number of values");
      return items;
    }
    const lengths = decodeInts(obj(head.lengths, "string lengths"), payload, n, r);
    const out = new Array<string>(n);
    let pos = 0;
    for (let i = 0; i < n; i++) {
      const len = Number(lengths[i]);
      if (len < 0 || pos + len > blob.length) throw new DecodeError("string lengths do not match the text");
      out[i] = utf8Pass(blob.subarray(pos, pos + len));
      pos += len;
    }
    if (pos !== blob.length) throw new DecodeError("string lengths do not match the text");
    return out;
  }
  throw new DecodeError(`unknown string encoding ${JSON.stringify(enc)}`);
}

// --- columns and tables ---------------------------------------------------------------------

const KINDS = ["missing", "null", "bool", "int", "float", "str", "obj", "arr", "other"] as const;

function intValue(v: number | bigint): number | bigint {
  return typeof v === "bigint" ? safeInt(v) : v;
}

/** Rows lo..hi of n: [lo, hi) within a column, an array's items or a table. */
type Span = [number, number];

/** How many of `tags[0..end)` are `kind`. */
function countTag(tags: Ints, kind: number, end: number): number {
  let m = 0;
  for (let i = 0; i < end; i++) if (Number(tags[i]) === kind) m++;
  return m;
}

/** The sums of `lengths[0..a)` and `lengths[0..b)`: where items a..b begin and end. */
function itemSpan(lengths: Ints, [a, b]: Span): Span {
  let first = 0;
  for (let i = 0; i < a; i++) first += Number(lengths[i]);
  let last = first;
  for (let i = a; i < b; i++) last += Number(lengths[i]);
  return [first, last];
}

/**
 * The column's `n` values, or only values `want` = [lo, hi) of them: every payload is still read
 * and every number decoded, but objects, arrays and rows outside the range are not built (a row
 * range of a chunk, `decodeRows`), as Python's decode_column does.
 */
function decodeColumn(head: Head, r: Reader, n: number, allowMissing = false, want: Span = [0, n]): unknown[] {
  if (n > r.limit) throw new LimitExceeded(`a column of ${n} values exceeds the limit of ${r.limit}`);
  r.spend(n);
  const [lo, hi] = want;
  const whole = lo === 0 && hi === n;
  let tags: Ints | null = null;
  if (head.tags !== undefined) {
    const h = obj(head.tags, "a column's tags");
    tags = decodeInts(h, r.take(h), n, r);
  }
  const kinds = obj(head.kinds, "a column's kinds");
  const parts = new Map<number, unknown[]>();
  KINDS.forEach((name, kind) => {
    if (!(name in kinds)) return;
    const h = obj(kinds[name], `a column's ${name} kind`);
    const m = tags === null ? n : countTag(tags, kind, n);
    // This kind's values a..b: all of them, or those of rows lo..hi.
    const [a, b]: Span = whole ? [0, m] : tags === null ? [lo, hi] : [countTag(tags, kind, lo), countTag(tags, kind, hi)];
    const cut = (all: unknown[]): unknown[] => (whole || all.length !== m ? all : all.slice(a, b));
    let part: unknown[];
    switch (name) {
      case "missing":
        if (!allowMissing) throw new DecodeError("a missing value outside a table with several shapes");
        part = new Array(b - a).fill(MISSING);
        break;
      case "null":
        part = new Array(b - a).fill(null);
        break;
      case "bool":
        part = Array.from(decodeBools(h, r.take(h), m, r).subarray(a, b), (x) => x === 1);
        break;
      case "int":
        part = Array.from(decodeInts(h, r.take(h), m, r).subarray(a, b) as ArrayLike<number | bigint>, intValue);
        break;
      case "float":
        part = Array.from(decodeFloats(h, r.take(h), m, r).subarray(a, b));
        break;
      case "str": {
        const all = decodeStrings(h, r.take(h), m, r);
        r.sources.push(all); // string columns are numbered in head order (spec §1.2)
        part = cut(all);
        break;
      }
      case "obj":
        part = "keys" in h ? decodeMap(h, r, m, [a, b]) : decodeTable(h, r, m, [a, b]);
        break;
      case "arr": {
        const [lengths, total] = decodeLengths(h, r, m, "array");
        const [first, last] = whole ? [0, total] : itemSpan(lengths, [a, b]);
        const items = decodeColumn(obj(h.items, "array items"), r, total, false, [first, last]);
        if (items.length !== last - first) throw new DecodeError("array lengths do not match their items");
        part = new Array(b - a);
        let pos = 0;
        for (let i = a; i < b; i++) {
          const len = Number(lengths[i]);
          part[i - a] = items.slice(pos, pos + len);
          pos += len;
        }
        break;
      }
      default: {
        const text = obj(h.text, "a JSON column's text");
        part = cut(decodeStrings(text, r.take(h), m, r).map(parseJSONText));
      }
    }
    if (part.length !== b - a) throw new DecodeError("column part has the wrong number of values");
    parts.set(kind, part);
  });
  if (tags === null) {
    if (n === 0 && parts.size === 0) return [];
    if (parts.size !== 1) throw new DecodeError("an untagged column must hold one kind");
    return parts.values().next().value!;
  }
  const at = new Map<number, number>();
  const out = new Array(hi - lo);
  for (let i = lo; i < hi; i++) {
    const t = Number(tags[i]);
    const part = parts.get(t);
    const k = at.get(t) ?? 0;
    if (part === undefined || k >= part.length) throw new DecodeError("column tags do not match its parts");
    out[i - lo] = part[k];
    at.set(t, k + 1);
  }
  return out;
}

/** An array's or a map's lengths, and their sum. */
function decodeLengths(h: Head, r: Reader, m: number, what: string): [Ints, number] {
  const lh = obj(h.lengths, `${what} lengths`);
  const lengths = decodeInts(lh, r.take(lh), m, r);
  let total = 0;
  for (let i = 0; i < m; i++) {
    const len = Number(lengths[i]);
    if (len < 0) throw new DecodeError(`negative ${what} length`);
    total += len;
  }
  return [lengths, total];
}

/** Objects whose keys are data: each one's entry count, then all keys and all values. */
function decodeMap(h: Head, r: Reader, m: number, want: Span = [0, m]): Record<string, unknown>[] {
  const [lengths, total] = decodeLengths(h, r, m, "map");
  const [lo, hi] = want;
  const [first, last] = lo === 0 && hi === m ? [0, total] : itemSpan(lengths, want);
  const keys = decodeColumn(obj(h.keys, "map keys"), r, total, false, [first, last]);
  const values = decodeColumn(obj(h.values, "map values"), r, total, false, [first, last]);
  if (keys.length !== last - first || values.length !== last - first) throw new DecodeError("map lengths do not match their entries");
  const out = new Array<Record<string, unknown>>(hi - lo);
  let pos = 0;
  for (let i = lo; i < hi; i++) {
    const row: Record<string, unknown> = {};
    const seen = new Set<string>();
    for (const end = pos + Number(lengths[i]); pos < end; pos++) {
      const k = keys[pos];
      if (typeof k !== "string") throw new DecodeError("a map key is not a string");
      if (seen.has(k)) throw new DecodeError("a key repeated within one map");
      seen.add(k);
      setKey(row, k, values[pos]);
    }
    out[i - lo] = row;
  }
  return out;
}

/** A derived column's values a..b of its m (`values` holds its source's a..b). */
function derived(h: Head, values: Map<string, unknown[]>, name: string, m: number, a = 0): unknown[] {
  const source = values.get(h.derived as string);
  const { prefix, suffix } = h;
  if (source === undefined || typeof prefix !== "string" || typeof suffix !== "string") {
    throw new DecodeError(`column ${JSON.stringify(name)} derives from an unknown column`);
  }
  const quoted = (a: string): string => urlQuote(a) ?? fail("a derived column's source has no UTF-8 to quote");
  const col: unknown[] = source.map((a) => (typeof a === "string" ? prefix + (h.quoted ? quoted(a) : a) + suffix : null));
  const except = h.except ?? [];
  if (!Array.isArray(except)) fail("bad derived-column exceptions");
  for (const item of except) {
    if (!Array.isArray(item) || item.length !== 2) fail("bad derived-column exception");
    const [i, v] = item;
    if (!(Number.isInteger(i) && i >= 0 && i < m) || typeof v !== "object" || v === null) fail("bad derived-column exception");
    if (i >= a && i < a + col.length) col[i - a] = (v as Head).missing ? MISSING : (v as Head).value;
  }
  return col;
}

/** A table's column entries as [key, head]: a bare head takes the next of `keys` (the shapes'
 * keys in order of first appearance) that no entry names. */
function named(columns: unknown[], keys: Iterable<string>): [string, Head][] {
  const isNamed = (e: unknown): e is [string, unknown] => Array.isArray(e) && e.length === 2 && typeof e[0] === "string";
  const names = columns.filter(isNamed).map((e) => e[0]);
  const taken = new Set(names);
  if (taken.size !== names.length) fail("a table's column entries name a key twice");
  const free = [...keys].filter((k) => !taken.has(k));
  let next = 0;
  return columns.map((entry): [string, Head] => {
    if (isNamed(entry)) return [entry[0], obj(entry[1], "a column")];
    if (Array.isArray(entry)) fail("bad column entry");
    if (next >= free.length) fail("more column entries than the table has keys");
    return [free[next++], obj(entry, "a column")];
  });
}

function decodeTable(head: Head, r: Reader, n: number, want: Span = [0, n]): Record<string, unknown>[] {
  const [lo, hi] = want;
  const { shapes, columns } = head;
  if (!Array.isArray(shapes) || !Array.isArray(columns) || shapes.length === 0) throw new DecodeError("table head lacks shapes or columns");
  for (const s of shapes) {
    if (!Array.isArray(s) || !s.every((k) => typeof k === "string")) fail("a table shape is not a list of keys");
    if (new Set(s).size !== s.length) fail("a table shape repeats a key");
  }
  let ids: Ints | null = null;
  const sparse = shapes.length > 1 && head.sparse === true;
  // Values per column: every row's, or in a sparse table those of the rows whose shape has the key.
  // A column's values a..b: those of rows lo..hi, or in a sparse table those of the rows from lo
  // to hi that have its key (`before` of them come before lo).
  const counts = new Map<string, number>();
  const before = new Map<string, number>();
  const within = new Map<string, number>();
  for (const s of shapes as string[][]) {
    for (const k of s) {
      counts.set(k, sparse ? 0 : n);
      before.set(k, 0);
      within.set(k, 0);
    }
  }
  if (shapes.length > 1) {
    const h = obj(head.shape_ids, "a table's shape ids");
    ids = decodeInts(h, r.take(h), n, r);
    // Rows of each shape: in all, before lo and within lo..hi; then of each key.
    const rowsOf = shapes.map(() => [0, 0, 0]);
    for (let i = 0; i < n; i++) {
      const s = Number(ids[i]);
      if (!(s >= 0 && s < shapes.length)) throw new DecodeError("shape id out of range");
      rowsOf[s][i < lo ? 1 : i < hi ? 2 : 0]++;
    }
    if (sparse) {
      (shapes as string[][]).forEach((keys, s) => {
        const [after, early, inside] = rowsOf[s];
        for (const k of keys) {
          counts.set(k, counts.get(k)! + after + early + inside);
          before.set(k, before.get(k)! + early);
          within.set(k, within.get(k)! + inside);
        }
      });
    }
  }
  const span = (k: string): Span => (sparse ? [before.get(k)!, before.get(k)! + within.get(k)!] : [lo, hi]);
  const values = new Map<string, unknown[]>();
  for (const entry of named(columns, counts.keys())) {
    const h = entry[1];
    const m = counts.get(entry[0]) ?? n;
    const [a, b] = counts.has(entry[0]) ? span(entry[0]) : [lo, hi];
    if ("derived" in h && sparse && (m !== n || counts.get(h.derived as string) !== n)) {
      fail(`column ${JSON.stringify(entry[0])} of a sparse table derives from a partial column`);
    }
    const col = "derived" in h ? derived(h, values, entry[0], m, a) : decodeColumn(h, r, m, shapes.length > 1 && !sparse, [a, b]);
    if (col.length !== b - a) throw new DecodeError(`column ${JSON.stringify(entry[0])} holds ${col.length} values, expected ${b - a}`);
    values.set(entry[0], col);
  }
  for (const k of counts.keys()) if (!values.has(k)) throw new DecodeError("table shape does not match its columns");
  const rows = new Array<Record<string, unknown>>(hi - lo);
  if (shapes.length === 1) {
    const keys = shapes[0] as string[];
    const cols = keys.map((k) => values.get(k)!);
    if (values.size !== keys.length) throw new DecodeError("table shape does not match its columns");
    for (let i = 0; i < hi - lo; i++) {
      const row: Record<string, unknown> = {};
      for (let k = 0; k < keys.length; k++) setKey(row, keys[k], cols[k][i]);
      rows[i] = row;
    }
    return rows;
  }
  const at = new Map<string, number>();
  for (const k of counts.keys()) at.set(k, 0);
  for (let i = lo; i < hi; i++) {
    const row: Record<string, unknown> = {};
    for (const k of shapes[Number(ids![i])] as string[]) {
      const j = sparse ? at.get(k)! : i - lo;
      const v = values.get(k)![j];
      if (v === MISSING) throw new DecodeError("a value is missing where the shape has its key");
      setKey(row, k, v);
      at.set(k, j + 1);
    }
    rows[i - lo] = row;
  }
  return rows;
}


// --- blocks -----------------------------------------------------------------------------------

interface Opened {
  head: Head;
  r: Reader;
}

function openBlock(data: Uint8Array, limit: number, maxBuilt: number): Opened {
  if (data.length < 4) throw new DecodeError("block is shorter than its header");
  const p = (data[0] | (data[1] << 8) | (data[2] << 16) | (data[3] << 24)) >>> 0;
  if (4 + p > data.length) throw new DecodeError("block payloads run past the block");
  if (data[4 + p] === 0x62) {
    // A brotli text (spec/TABULAR_FORMAT.md §1), which only files that are not portable hold.
    throw new UnsupportedFrame("a brotli block text: write the file with the portable profile to read it here");
  }
  const text = zstdDecompress(data.subarray(4 + p), { maxSize: limit });
  if (text.length < 4) throw new DecodeError("block head runs past its frame");
  const m = (text[0] | (text[1] << 8) | (text[2] << 16) | (text[3] << 24)) >>> 0;
  if (text.length < 4 + m) throw new DecodeError("block head runs past its frame");
  const head = readHead(parseJSON(text.subarray(4, 4 + m)));
  return { head, r: new Reader(data.subarray(0, 4 + p), text.subarray(4 + m), limit, maxBuilt) };
}

/** Decode one column block to its value. */
export function decodeBlock(data: Uint8Array, limit = MAX_VALUES, maxBuilt = MAX_BUILT): unknown {
  const { head, r } = openBlock(data, limit, maxBuilt);
  const out = decodeColumn(obj(head.root, "a block's root"), r, 1);
  if (r.pos !== r.data.length) throw new DecodeError(`${r.data.length - r.pos} bytes after the block's columns`);
  if (out.length !== 1) throw new DecodeError("a block holds one value");
  return out[0];
}

/**
 * Rows lo..hi (0 <= lo <= hi) of a block holding rows (a container's chunk), and how many it
 * holds: every payload is read, but only those rows (and what they hold) are built. Null where
 * the block holds something other than an array, as Python's decode_rows.
 */
function decodeRows(data: Uint8Array, lo: number, hi: number, limit: number, maxBuilt: number, key?: string): [number, unknown[]] | null {
  const { head, r } = openBlock(data, limit, maxBuilt);
  const arr = rowsHead(head, key);
  if (arr === null) return null;
  r.spend(1);
  const n = Number(decodeLengths(arr, r, 1, "array")[0][0]);
  const rows = decodeColumn(obj(arr.items, "array items"), r, n, false, [Math.min(lo, n), Math.min(hi, n)]);
  // A document block's rows are read alone: the rest of the block follows them (spec §2).
  if (key === undefined && r.pos !== r.data.length) throw new DecodeError(`${r.data.length - r.pos} bytes after the block's columns`);
  return [n, rows];
}

/** The column of one kind only, `kind`, or null. */
function only(column: unknown, kind: string): Head | null {
  if (typeof column !== "object" || column === null || Array.isArray(column)) return null;
  const c = column as Head;
  const kinds = c.kinds;
  const plain = typeof kinds === "object" && kinds !== null && !Array.isArray(kinds);
  if (c.tags !== undefined || !plain || Object.keys(kinds).length !== 1 || !(kind in kinds)) return null;
  return obj((kinds as Head)[kind], "a column's part");
}

/**
 * The head of a block's array of rows: its root's, or (`key`) that of the first column of its
 * root's one object, where that column is `key`'s and an array (a document block's, spec §2);
 * null where the block is not so, as Python's `_rows_head`.
 */
function rowsHead(head: Head, key?: string): Head | null {
  let root: unknown = obj(head.root, "a block's root");
  if (key !== undefined) {
    const table = only(root, "obj"); // a table of one shape: no payload before its first column
    const columns = table !== null && Array.isArray(table.shapes) && table.shapes.length === 1 ? table.columns : undefined;
    const entry = Array.isArray(columns) ? columns[0] : undefined;
    if (!Array.isArray(entry) || entry.length !== 2 || entry[0] !== key) return null;
    root = entry[1];
  }
  return only(root, "arr");
}

export interface ColumnOptions {
  /** Datetime text columns as epoch milliseconds (Float64Array) instead of strings. */
  timestamps?: boolean;
}

/** A column as typed as its values allow. */
export type Column = Float64Array | BigInt64Array | Uint8Array | unknown[];

/** A block of rows as columns: numbers, booleans and (if asked) timestamps into typed arrays. */
/** Rows already built, as columns of values: a key a row lacks reads as null; rows that are not all objects are one column, `value` (as Python's `columns_of`). */
function columnsOf(rows: unknown[]): Map<string, Column> {
  const isObject = (row: unknown): boolean => typeof row === "object" && row !== null && !Array.isArray(row);
  if (!rows.every(isObject)) return new Map([["value", rows]]);
  const names = [...new Set(rows.flatMap((row) => Object.keys(obj(row, "a row"))))];
  return new Map(names.map((k) => [k, rows.map((row) => (row as Head)[k] ?? null)]));
}

function blockColumns(data: Uint8Array, options: ColumnOptions, limit: number, maxBuilt: number, key?: string): [Map<string, Column>, number] {
  const { head, r } = openBlock(data, limit, maxBuilt);
  const arr = rowsHead(head, key);
  const lengths = arr === null ? {} : obj(arr.lengths, "the row count");
  const items = arr === null ? {} : obj(arr.items, "the rows");
  const table = (items.kinds as Head | undefined)?.obj as Head | undefined;
  if (arr === null || lengths.len !== undefined || items.tags !== undefined || table === undefined || !Array.isArray(table.shapes) || table.shapes.length !== 1) {
    const value = decodeBlock(data, limit, maxBuilt);
    const rows = key === undefined ? value : typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Head)[key] : undefined;
    if (!Array.isArray(rows)) fail("block does not hold rows");
    return [columnsOf(rows), rows.length];
  }
  const n = (decodeInts(lengths, new Uint8Array(0), 1, r) as ArrayLike<number>)[0];
  if (typeof n !== "number" || n > limit) throw new LimitExceeded(`a table of ${n} rows exceeds the limit of ${limit}`);
  r.spend(1);
  const out = new Map<string, Column>();
  for (const [name, h] of named(table.columns as unknown[], table.shapes[0] as string[])) {
    const kinds = (h.kinds ?? {}) as Head;
    const only = Object.keys(kinds);
    if ("derived" in h) {
      out.set(name, derived(h, out as Map<string, unknown[]>, name, n).map((v) => (v === MISSING ? null : v)));
    } else if (h.tags === undefined && only.length === 1 && ["int", "float", "bool"].includes(only[0])) {
      const k = obj(kinds[only[0]], "a column");
      r.spend(n);
      const p = r.take(k);
      out.set(name, only[0] === "int" ? decodeInts(k, p, n, r) : only[0] === "float" ? decodeFloats(k, p, n, r) : decodeBools(k, p, n, r));
    } else if (options.timestamps && h.tags === undefined && only.length === 1 && only[0] === "str" && ["datetime", "stamp"].includes(obj(kinds.str, "a column").enc as string)) {
      const k = obj(kinds.str, "a column");
      r.spend(n);
      const ints = decodeInts(obj(k.ints, "a datetime's integers"), r.take(k), n, r);
      const ms = new Float64Array(n);
      const stampScale = k.enc === "stamp" ? STAMP_UNITS[k.unit as string] : undefined;
      if (k.enc === "stamp" && stampScale === undefined) throw new DecodeError("stamp column of an unknown unit");
      for (let i = 0; i < n; i++) ms[i] = stampScale === undefined ? epochMs(k.unit as string, ints[i]) : Number(ints[i]) * stampScale * 1000;
      out.set(name, ms);
    } else {
      out.set(name, decodeColumn(h, r, n));
    }
  }
  return [out, n];
}

// --- the container ------------------------------------------------------------------------------

interface Footer {
  format: number;
  path: string[] | null;
  rows: number;
  chunks: number[][];
  skeleton: number[] | null;
}

export interface TableLimits {
  /** Largest chunk read, in bytes. */
  maxChunkBytes?: number;
  /** Values one chunk may build. */
  maxValues?: number;
}

/** A .zct container held in memory: rows, ranges, columns and the document, chunk by chunk. */
export class Table {
  private readonly footer: Footer;
  private readonly starts: number[] = [];
  /** The first chunk is the document block (spec §2): the whole document, its rows at the path. */
  private readonly documentBlock: boolean;
  private readonly maxChunkBytes: number;
  private readonly maxValues: number;

  private constructor(
    private readonly data: Uint8Array,
    limits: TableLimits,
  ) {
    this.maxChunkBytes = limits.maxChunkBytes ?? 1 << 28;
    this.maxValues = limits.maxValues ?? MAX_BUILT;
    this.footer = readFooter(data);
    const [first] = this.footer.chunks;
    const skeleton = this.footer.skeleton;
    this.documentBlock = first !== undefined && skeleton !== null && first[0] === skeleton[0] && first[1] === skeleton[1];
    let total = 0;
    for (const entry of this.footer.chunks) {
      this.starts.push(total);
      total += entry[2];
    }
    if (total !== this.footer.rows) throw new DecodeError("container footer's row counts disagree");
  }

  /** Open a container: its trailer, footer and index are checked now, chunks when read. */
  static open(data: Uint8Array, limits: TableLimits = {}): Table {
    return new Table(data, limits);
  }

  get length(): number {
    return this.footer.rows;
  }

  /** Where the rows sit in the document: null (the document is the only row), [] or [key]. */
  get path(): string[] | null {
    return this.footer.path;
  }

  private block(offset: number, length: number, check?: number): Uint8Array {
    if (length > this.maxChunkBytes) throw new DecodeError(`a ${length}-byte chunk exceeds the limit`);
    const data = this.data.subarray(offset, offset + length);
    if (check !== undefined && crc32(data) !== check) throw new ChecksumMismatch(`the block at byte ${offset} fails its CRC-32`);
    return data;
  }

  /** The first chunk's rows in the document block's value: the array at the table's path. */
  private documentRows(document: unknown): unknown[] {
    const n = this.footer.chunks[0][2];
    const key = (this.footer.path as string[])[0];
    const rows = typeof document === "object" && document !== null && !Array.isArray(document) ? (document as Head)[key] : undefined;
    if (!Array.isArray(rows) || rows.length !== n) throw new DecodeError(`the document block does not hold its ${n} rows at the table's path`);
    return rows;
  }

  /** The table's key where this chunk entry is the document block's (its rows' column first). */
  private documentKey(entry: number[]): string | undefined {
    return this.documentBlock && entry === this.footer.chunks[0] ? (this.footer.path as string[])[0] : undefined;
  }

  private chunks(start: number, stop: number): [number, number[]][] {
    const out: [number, number[]][] = [];
    this.footer.chunks.forEach((entry, i) => {
      const first = this.starts[i];
      if (first + entry[2] > start && first < stop) out.push([first, entry]);
    });
    return out;
  }

  private range(start?: number, stop?: number): [number, number] {
    const n = this.length;
    const norm = (v: number | undefined, d: number) => (v === undefined ? d : v < 0 ? Math.max(n + v, 0) : Math.min(v, n));
    return [norm(start, 0), norm(stop, n)];
  }

  /**
   * Rows start..stop, as `rows.slice(start, stop)` would be: only their chunks are read, and of
   * a chunk read in part only the rows asked for are built.
   */
  rows(start?: number, stop?: number): unknown[] {
    const [a, b] = this.range(start, stop);
    const out: unknown[] = [];
    for (const [first, entry] of this.chunks(a, b)) {
      const [offset, length, n, check] = entry;
      const data = this.block(offset, length, check);
      const lo = Math.max(a - first, 0);
      const hi = Math.min(b - first, n);
      const key = this.documentKey(entry);
      let part = lo === 0 && hi === n && key === undefined ? null : decodeRows(data, lo, hi, MAX_VALUES, this.maxValues, key);
      if (part === null) {
        const value = decodeBlock(data, MAX_VALUES, this.maxValues);
        const rows = key === undefined ? value : this.documentRows(value); // a document block written otherwise
        if (!Array.isArray(rows)) throw new DecodeError(`a chunk does not hold its ${n} rows`);
        part = [rows.length, rows.slice(lo, hi)];
      }
      if (part[0] !== n) throw new DecodeError(`a chunk does not hold its ${n} rows`);
      for (const row of part[1]) out.push(row);
    }
    return out;
  }

  /**
   * Rows start..stop as columns: integers as Float64Array (BigInt64Array past 2^53), floats as
   * Float64Array, booleans as Uint8Array, datetime text as epoch milliseconds when
   * `timestamps` is set, anything else as an array of values; no object per row is built.
   */
  columns(start?: number, stop?: number, options: ColumnOptions = {}): Record<string, Column> {
    const [a, b] = this.range(start, stop);
    const pieces: [number, Map<string, Column>][] = [];
    for (const [first, entry] of this.chunks(a, b)) {
      const [offset, length, n, check] = entry;
      const data = this.block(offset, length, check);
      const [cols, count] = blockColumns(data, options, MAX_VALUES, this.maxValues, this.documentKey(entry));
      if (count !== n || [...cols.values()].some((c) => c.length !== n)) throw new DecodeError(`a chunk does not hold its ${n} rows`);
      const lo = Math.max(a - first, 0);
      const hi = Math.min(b - first, n);
      pieces.push([hi - lo, new Map([...cols].map(([k, c]) => [k, c.slice(lo, hi) as Column]))]);
    }
    const names = [...new Set(pieces.flatMap(([, p]) => [...p.keys()]))];
    const out: Record<string, Column> = {};
    for (const k of names) {
      const parts = pieces.map(([count, p]) => p.get(k) ?? new Array(count).fill(null));
      out[k] = concat(parts);
    }
    return out;
  }

  /** The whole document: the skeleton with the rows put back at their path. */
  document(): unknown {
    const path = this.footer.path;
    if (path === null || path.length === 0) {
      const rows = this.rows();
      if (path === null && rows.length !== 1) throw new DecodeError("a container without a table path holds one document");
      return path === null ? rows[0] : rows;
    }
    const where = this.footer.skeleton;
    if (where === null) throw new DecodeError("container footer lacks the document skeleton");
    const skeleton = decodeBlock(this.block(where[0], where[1], where[2]), MAX_VALUES, this.maxValues);
    // The document block holds the first chunk's rows already (spec §2): the rest follow.
    const first = this.documentBlock ? this.documentRows(skeleton) : [];
    const rows = [...first, ...this.rows(first.length)];
    let holder = skeleton as Head;
    for (const key of path.slice(0, -1)) holder = obj(holder?.[key], "the table's path");
    if (typeof holder !== "object" || holder === null) fail("the table's path is not in the document skeleton");
    holder[path[path.length - 1]] = rows;
    return skeleton;
  }
}

function concat(parts: Column[]): Column {
  if (parts.length === 1) return parts[0];
  const kind = parts[0].constructor;
  if (parts.every((p) => p.constructor === kind) && kind !== Array) {
    const total = parts.reduce((s, p) => s + p.length, 0);
    const out = new (kind as Float64ArrayConstructor)(total);
    let o = 0;
    for (const p of parts) {
      out.set(p as Float64Array, o);
      o += p.length;
    }
    return out;
  }
  // Mixed kinds (a chunk without the column, or of another type): plain values, booleans kept
  // booleans rather than the 0 and 1 of their Uint8Array.
  return parts.flatMap((p) => (p instanceof Uint8Array ? Array.from(p, (v) => v !== 0) : Array.from(p as ArrayLike<unknown>)));
}

/** A compact footer (spec §2) as the JSON footer it stands for, its entries checked after, as Python's `_read_compact_footer`. */
function compactFooter(data: Uint8Array, version: number): Footer {
  let at = 1;
  const varint = (): number => {
    // At most 9 bytes: below 2^63; a Number holds it exactly below 2^53, and no file is larger.
    const [n, next] = readVarint(data, at, 9);
    at = next;
    return n;
  };
  const take = (n: number): Uint8Array => {
    if (at + n > data.length) throw new DecodeError("compact footer is cut short");
    at += n;
    return data.subarray(at - n, at);
  };
  const crc = (): number[] => (version === 2 ? [(take(4).reduce((a, b, i) => a + b * 2 ** (8 * i), 0))] : []);
  const format = varint();
  const flags = varint();
  const kind = Math.floor(flags / 8);
  if (kind > 2 || (flags & 4 && !(flags & 2 && kind === 2))) throw new DecodeError(`compact footer has unknown flags ${flags}`);
  let path: string[] | null = kind === 0 ? null : [];
  if (kind === 2) {
    try {
      path = [new TextDecoder("utf-8", { fatal: true }).decode(take(varint()))];
    } catch (e) {
      if (e instanceof DecodeError) throw e;
      throw new DecodeError("compact footer's key is not UTF-8");
    }
  }
  const count = varint();
  if (count > data.length) throw new DecodeError("compact footer is cut short");
  const chunks: number[][] = [];
  let end = 8;
  for (let i = 0; i < count; i++) {
    const offset = end + varint();
    const length = varint();
    const rows = varint();
    chunks.push([offset, length, rows, ...crc()]);
    end = offset + length;
  }
  let skeleton: number[] | null = null;
  if (flags & 4) {
    if (chunks.length === 0) throw new DecodeError("compact footer names a document block but no chunk");
    skeleton = [chunks[0][0], chunks[0][1], ...chunks[0].slice(3)];
  } else if (flags & 2) {
    const offset = varint();
    const length = varint();
    skeleton = [offset, length, ...crc()];
  }
  if (at !== data.length) throw new DecodeError(`${data.length - at} bytes after the compact footer`);
  const rows = chunks.reduce((sum, c) => sum + c[2], 0);
  return { format, path, rows, chunks, skeleton, ...(flags & 1 ? { portable: true } : {}) } as Footer;
}

function readFooter(data: Uint8Array): Footer {
  const version = data[4];
  const header = MAGIC.every((b, i) => data[i] === b) && (version === 1 || version === 2) && !data[5] && !data[6] && !data[7];
  if (!header || data.length < 8 + TRAILERS[version]) throw new DecodeError("not a Zeroc container (.zct): bad magic or version");
  const trailer = TRAILERS[version];
  const tail = data.subarray(data.length - trailer);
  if (!MAGIC.every((b, i) => tail[trailer - 4 + i] === b)) throw new DecodeError("container is truncated: no footer magic at the end");
  const u32 = (b: Uint8Array, at: number) => (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
  const length = u32(tail, trailer - 8);
  const offset = data.length - trailer - length;
  if (length > MAX_FOOTER || offset < 8) throw new DecodeError("container footer length is invalid");
  const raw = data.subarray(offset, offset + length);
  if (version === 2 && crc32(raw) !== u32(tail, 0)) throw new ChecksumMismatch("the container's footer fails its CRC-32");
  const footer = raw[0] === 0x01 ? compactFooter(raw, version) : (parseJSON(raw[0] === 0x7b ? raw : zstdDecompress(raw, { maxSize: MAX_FOOTER })) as Footer);
  const path = footer?.path;
  const ok =
    typeof footer === "object" &&
    footer !== null &&
    footer.format === version &&
    Array.isArray(footer.chunks) &&
    Number.isInteger(footer.rows) &&
    "path" in footer &&
    (path === null || (Array.isArray(path) && path.every((k) => typeof k === "string")));
  if (!ok) throw new DecodeError("container footer lacks its index");
  const checked = version === 2 ? 1 : 0;
  let end = 8;
  const valid = (e: unknown, size: number, after: number) =>
    Array.isArray(e) && e.length === size && e.every((x) => Number.isInteger(x) && x >= 0) && e[0] >= after && e[0] + e[1] <= offset;
  for (const entry of footer.chunks) {
    if (!valid(entry, 3 + checked, end)) throw new DecodeError("container index entry is invalid (out of the file or overlapping)");
    end = entry[0] + entry[1];
  }
  const skeleton = footer.skeleton ?? null;
  if (skeleton !== null && !valid(skeleton, 2 + checked, 8)) throw new DecodeError("container footer's skeleton entry is invalid");
  const [first] = footer.chunks;
  if (skeleton !== null && first !== undefined && first[0] === skeleton[0] && first[1] === skeleton[1]) {
    // The document block (spec §2): the same block, CRC-32 included, and the rows under one key.
    if (first[3] !== skeleton[2] || path?.length !== 1) throw new DecodeError("container footer's document block is invalid");
  } else if (skeleton !== null && footer.chunks.some((c) => c[0] < skeleton[0] + skeleton[1] && skeleton[0] < c[0] + c[1])) {
    throw new DecodeError("container footer's skeleton overlaps a chunk");
  }
  return { ...footer, skeleton };
}
