// A block head's compact form, spelt out (spec/TABULAR_FORMAT.md §1.3), as Python's
// zeroc.tabular._head reads it: the column decoders then know one form only.

import { DecodeError, UnsupportedFrame } from "./errors.js";

type Head = Record<string, unknown>;

const KINDS: Record<string, string> = { m: "missing", n: "null", b: "bool", i: "int", f: "float", s: "str", o: "obj", a: "arr", x: "other" };
const ENCS: Record<string, string> = {
  em: "empty", se: "series", pc: "pco", zd: "zstd-delta", zn: "zstd-narrow", de: "decimal", fz: "f64-zstd", fp: "f64-pco",
  bi: "bits", pi: "prefix-int", di: "dict", te: "text", st: "stamp", dt: "datetime", js: "json", rf: "ref", zb: "zstd-bytes",
};
const MEMBERS: Record<string, string> = {
  v: "value", s: "start", d: "step", n: "len", f: "first", w: "width", k: "scale", u: "unit", z: "z",
  i: "ints", c: "codes", t: "table", l: "lengths", tx: "text", sz: "size", ct: "count", fm: "format", p: "prefix", sr: "source",
};
const NESTED = new Set(["ints", "codes", "table", "lengths", "text"]); // members that are encodings
const DERIVED: Record<string, string> = { dv: "derived", p: "prefix", s: "suffix", q: "quoted", ex: "except" };
const MAX_NESTING = 64; // columns within columns a reader expands (writers nest at most 49)

function fail(what: string): never {
  throw new DecodeError(`malformed block head: ${what}`);
}

function object(c: unknown, what: string): Head {
  if (typeof c !== "object" || c === null || Array.isArray(c)) fail(`${what} in a compact head is not an object`);
  return c as Head;
}

function own(h: Head): string[] {
  return Object.keys(h);
}

function lookup(table: Record<string, string>, k: string, what: string): string {
  if (!Object.prototype.hasOwnProperty.call(table, k)) fail(`${what} ${JSON.stringify(k)}`);
  return table[k];
}

/** A block head as §1.1 spells it out, whichever form it was written in. */
export function readHead(head: unknown): Head {
  const h = object(head, "a block head");
  if (!Object.prototype.hasOwnProperty.call(h, "r")) return h; // spelt out: the decoders check it
  if (Object.prototype.hasOwnProperty.call(h, "v")) {
    throw new UnsupportedFrame("a block with a value stream: write the file with the portable profile to read it here");
  }
  if (own(h).length !== 1) fail("a compact block head holds more than its root");
  return { root: column(h.r, 0) };
}

function column(c: unknown, depth: number): Head {
  if (depth > MAX_NESTING) fail(`a compact head nests columns more than ${MAX_NESTING} deep`);
  const out: Head = {};
  const kinds: Head = {};
  const h = object(c, "a column");
  for (const k of own(h)) {
    const v = h[k];
    if (k === "t") {
      out.tags = encoding(v);
      continue;
    }
    const kind = lookup(KINDS, k, "a compact column names an unknown kind");
    if (kind === "missing" || kind === "null") {
      if (v !== 0) fail(`a compact column's ${kind} part is not 0`);
      kinds[kind] = {};
    } else if (kind === "obj") {
      kinds[kind] = objectPart(object(v, "an object part"), depth);
    } else if (kind === "arr") {
      const a = object(v, "an array part");
      if (own(a).length !== 2 || !("l" in a) || !("i" in a)) fail("a compact array part is not its lengths and items");
      kinds[kind] = { lengths: encoding(a.l), items: column(a.i, depth + 1) };
    } else {
      kinds[kind] = encoding(v);
    }
  }
  out.kinds = kinds;
  return out;
}

function encoding(c: unknown): Head {
  if (Array.isArray(c)) return { enc: "inline", values: c };
  if ((typeof c === "number" && Number.isInteger(c)) || typeof c === "bigint") return { enc: "text", size: c };
  const h = object(c, "an encoding");
  if (!Object.prototype.hasOwnProperty.call(h, "e")) {
    if (own(h).length !== 1 || !("c" in h)) fail("a compact constant is not {c: value}");
    return { enc: "const", value: h.c };
  }
  if (typeof h.e !== "string") fail("a compact encoding's name is not a string");
  const out: Head = { enc: lookup(ENCS, h.e, "a compact head names an unknown encoding") };
  for (const k of own(h)) {
    if (k === "e") continue;
    const name = lookup(MEMBERS, k, "a compact encoding names an unknown member");
    out[name] = NESTED.has(name) ? encoding(h[k]) : h[k];
  }
  return out;
}

function objectPart(c: Head, depth: number): Head {
  const keys = own(c);
  if ("y" in c) {
    if (keys.length !== 3 || !("l" in c) || !("v" in c)) fail("a compact map is not its lengths, keys and values");
    return { lengths: encoding(c.l), keys: column(c.y, depth + 1), values: column(c.v, depth + 1) };
  }
  if (!keys.every((k) => ["h", "d", "p", "o"].includes(k)) || !("h" in c) || !("o" in c)) {
    fail("a compact table is not its shapes, shape ids, sparse flag and columns");
  }
  const out: Head = { shapes: c.h };
  if ("d" in c) out.shape_ids = encoding(c.d);
  if ("p" in c) out.sparse = c.p;
  if (!Array.isArray(c.o)) fail("a compact table's columns are not a list");
  out.columns = c.o.map((e: unknown) =>
    Array.isArray(e) && e.length === 2 ? [e[0], entry(object(e[1], "a named column"), depth)] : column(e, depth + 1),
  );
  return out;
}

function entry(c: Head, depth: number): Head {
  if (!("dv" in c)) return column(c, depth + 1);
  const out: Head = { derived: c.dv, prefix: "", suffix: "" };
  for (const k of own(c)) out[lookup(DERIVED, k, "a compact derived column names an unknown member")] = c[k];
  return out;
}
