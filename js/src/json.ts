// The json serialization (spec/WIRE_FORMAT.md §2) to values, exactly. JSON.parse turns an
// integer past 2^53 into a nearby double (a tweet id among them) and refuses NaN and Infinity,
// which text marked with a leading space may hold. Text that could hold either goes through the
// exact parser below: integers past Number.MAX_SAFE_INTEGER come back as BigInt, NaN and
// ±Infinity as numbers. Everything else is JSON.parse's, the fastest parser there is.

import { DecodeError } from "./errors.js";
import { LONE_SURROGATE, setKey } from "./values.js";

const UTF8 = new TextDecoder("utf-8", { fatal: true });
const LONG_DIGITS = /[0-9]{16}/;

export function parseJSON(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new DecodeError("json serialization is not UTF-8");
  }
  return parseJSONText(text);
}

/** parseJSON for text already decoded. */
export function parseJSONText(text: string): unknown {
  if (text.charCodeAt(0) !== 0x20 && !LONG_DIGITS.test(text)) {
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new DecodeError(`json serialization does not parse: ${(e as Error).message}`);
    }
  }
  return new ExactParser(text).document();
}

/**
 * A float whose value is an integer (1.0, -0.0, 1e16), kept apart from the integer of the same
 * value where Python tells them apart: learned models compare values by type, and a learned
 * frame's checksum covers Python's text of the value ("1.0", not "1"). `parseJSONTyped` and the
 * learned decoder make them; `unwrapFloats` turns them back into numbers. `made` counts them, so
 * that a decoder knows when a value it built holds none and needs no unwrapping.
 */
export class PyFloat {
  static made = 0;
  constructor(readonly value: number) {
    PyFloat.made++;
  }
}

/**
 * The keys of an object in the order its text gave them, where JavaScript would reorder them:
 * an object's integer-like keys ("4", "9") always come first in JavaScript, in Python where they
 * were written. Set (not enumerable) on the objects of typed values that have such keys, so that
 * `pythonText` writes them in Python's order.
 */
export const KEY_ORDER: unique symbol = Symbol("keyOrder");

const INDEX_KEY = /^(?:0|[1-9][0-9]{0,9})$/;

/** Whether JavaScript would reorder these keys (some are integer-like). */
export function reordered(keys: string[]): boolean {
  return keys.some((k) => INDEX_KEY.test(k) && Number(k) < 4294967295);
}

/** Remember `keys` as `o`'s order (where `reordered(keys)`: the caller may know it already). */
export function keepOrder(o: object, keys: string[], needed = reordered(keys)): void {
  if (needed) Object.defineProperty(o, KEY_ORDER, { value: keys, enumerable: false });
}

/** Like parseJSON, but integral floats come back as PyFloat (and objects keep their key order). */
export function parseJSONTyped(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new DecodeError("json serialization is not UTF-8");
  }
  return new ExactParser(text, true).document();
}

/** A value with its PyFloats turned back into numbers (the same object where it has none). */
export function unwrapFloats(v: unknown): unknown {
  if (v instanceof PyFloat) return v.value;
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = unwrapFloats(v[i]);
    return v;
  }
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) o[k] = unwrapFloats(o[k]);
  return o;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const MAX_DEPTH = 1024; // as orjson, the Python side's parser

class ExactParser {
  private i = 0;
  constructor(
    private readonly s: string,
    private readonly typed = false,
  ) {}

  document(): unknown {
    const v = this.value(0);
    this.space();
    if (this.i !== this.s.length) this.fail("text after the value");
    return v;
  }

  private fail(what: string): never {
    throw new DecodeError(`json serialization does not parse: ${what} at character ${this.i}`);
  }

  private space(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      this.i++;
    }
  }

  private word(w: string, v: unknown): unknown {
    if (!this.s.startsWith(w, this.i)) this.fail("an unknown token");
    this.i += w.length;
    return v;
  }

  private value(depth: number): unknown {
    if (depth > MAX_DEPTH) this.fail("nesting too deep");
    this.space();
    const c = this.s[this.i];
    if (c === "{") return this.object(depth);
    if (c === "[") return this.array(depth);
    if (c === '"') return this.string();
    if (c === "t") return this.word("true", true);
    if (c === "f") return this.word("false", false);
    if (c === "n") return this.word("null", null);
    if (c === "N") return this.word("NaN", NaN);
    if (c === "I") return this.word("Infinity", Infinity);
    if (c === "-" && this.s[this.i + 1] === "I") return this.word("-Infinity", -Infinity);
    return this.number();
  }

  private number(): number | bigint | PyFloat {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (m === null) this.fail("an unexpected character");
    this.i += m[0].length;
    const n = Number(m[0]);
    if (m[1] === undefined && m[2] === undefined) return Number.isSafeInteger(n) ? n + 0 : BigInt(m[0]); // "-0" is the integer 0
    return this.typed && Number.isInteger(n) ? new PyFloat(n) : n;
  }

  private string(): string {
    const start = this.i;
    const s = this.s;
    let j = start + 1;
    for (;;) {
      if (j >= s.length) this.fail("an unterminated string");
      const c = s.charCodeAt(j);
      if (c === 0x22) break;
      if (c === 0x5c) j++;
      else if (c < 0x20) this.fail("a control character in a string");
      j++;
    }
    this.i = j + 1;
    try {
      return JSON.parse(s.slice(start, j + 1)) as string;
    } catch {
      return this.fail("a bad escape in a string");
    }
  }

  private array(depth: number): unknown[] {
    this.i++;
    const out: unknown[] = [];
    this.space();
    if (this.s[this.i] === "]") {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth + 1));
      this.space();
      const c = this.s[this.i++];
      if (c === "]") return out;
      if (c !== ",") this.fail("a missing ',' or ']'");
    }
  }

  private object(depth: number): Record<string, unknown> {
    this.i++;
    const out: Record<string, unknown> = {};
    const keys: string[] = [];
    this.space();
    if (this.s[this.i] === "}") {
      this.i++;
      return out;
    }
    for (;;) {
      this.space();
      if (this.s[this.i] !== '"') this.fail("a missing key");
      const key = this.string();
      this.space();
      if (this.s[this.i++] !== ":") this.fail("a missing ':'");
      const v = this.value(depth + 1);
      setKey(out, key, v);
      if (this.typed && !keys.includes(key)) keys.push(key);
      this.space();
      const c = this.s[this.i++];
      if (c === "}") {
        if (this.typed) keepOrder(out, keys);
        return out;
      }
      if (c !== ",") this.fail("a missing ',' or '}'");
    }
  }
}

// --- Python's text of a value -------------------------------------------------------------------

const UTF8_OUT = new TextEncoder();

/** Shortest round-trip digits of a finite nonzero |x| and the exponent of its first digit. */
function digits(x: number): [string, number] {
  const [mant, exp] = Math.abs(x).toExponential().split("e");
  return [mant.replace(".", ""), Number(exp)];
}

/** A float as orjson writes it (positional from 1e-5 to 1e16) or as Python's repr (from 1e-4). */
function floatText(x: number, repr: boolean): string {
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity";
  const [d, e] = digits(x);
  const sign = x < 0 ? "-" : "";
  const a = Math.abs(x);
  if (a >= (repr ? 1e-4 : 1e-5) && a < 1e16) {
    if (e >= 0) {
      const whole = d.length > e + 1 ? d.slice(0, e + 1) : d.padEnd(e + 1, "0");
      const frac = d.length > e + 1 ? d.slice(e + 1) : "0";
      return `${sign}${whole}.${frac}`;
    }
    return `${sign}0.${"0".repeat(-e - 1)}${d}`;
  }
  const mant = d.length > 1 ? `${d[0]}.${d.slice(1)}` : d;
  const ex = repr ? String(Math.abs(e)).padStart(2, "0") : String(Math.abs(e));
  return `${sign}${mant}e${e < 0 ? "-" : "+"}${ex}`;
}

/** Whether Python's dumps takes its exact path for `v`: integers past 64 bits, NaN or infinities, lone surrogates. */
function needsExact(v: unknown): boolean {
  if (typeof v === "bigint") return v < -(1n << 63n) || v >= 1n << 64n;
  if (typeof v === "number") return !Number.isFinite(v);
  if (typeof v === "string") return LONE_SURROGATE.test(v);
  if (v instanceof PyFloat || v === null || typeof v !== "object") return false;
  if (Array.isArray(v)) return v.some(needsExact);
  return Object.entries(v).some(([k, x]) => LONE_SURROGATE.test(k) || needsExact(x));
}

function asciiOnly(text: string): string {
  return text.replace(/[\u0080-\uFFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function textOf(v: unknown, repr: boolean, ascii: boolean): string {
  if (v === null) return "null";
  if (v === true) return "true";
  if (v === false) return "false";
  if (v instanceof PyFloat) return floatText(v.value, repr);
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : floatText(v, repr);
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "string") return ascii ? asciiOnly(JSON.stringify(v)) : JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map((x) => textOf(x, repr, ascii)).join(",")}]`;
  const o = v as Record<string, unknown> & { [KEY_ORDER]?: string[] };
  const keys = o[KEY_ORDER] ?? Object.keys(o);
  const parts = keys.map((k) => `${ascii ? asciiOnly(JSON.stringify(k)) : JSON.stringify(k)}:${textOf(o[k], repr, ascii)}`);
  return `{${parts.join(",")}}`;
}

/**
 * The json serialization of a value exactly as the Python library writes it (`zeroc._json.dumps`:
 * orjson, or, for integers past 64 bits, NaN and infinities, the standard library's text after
 * the exact mark), PyFloats as floats: what a learned frame's checksum covers.
 */
export function pythonText(v: unknown): Uint8Array {
  if (!needsExact(v)) return UTF8_OUT.encode(textOf(v, false, false));
  // The standard library's text with lone surrogates cannot be UTF-8: it is written as ASCII.
  return UTF8_OUT.encode(" " + textOf(v, true, hasLoneSurrogate(v)));
}

function hasLoneSurrogate(v: unknown): boolean {
  if (typeof v === "string") return LONE_SURROGATE.test(v);
  if (v === null || typeof v !== "object" || v instanceof PyFloat) return false;
  if (Array.isArray(v)) return v.some(hasLoneSurrogate);
  return Object.entries(v).some(([k, x]) => LONE_SURROGATE.test(k) || hasLoneSurrogate(x));
}
