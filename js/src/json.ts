// The json serialization (spec/WIRE_FORMAT.md §2) to values, exactly. JSON.parse turns an
// integer past 2^53 into a nearby double (a tweet id among them) and refuses NaN and Infinity,
// which text marked with a leading space may hold. Text that could hold either goes through the
// exact parser below: integers past Number.MAX_SAFE_INTEGER come back as BigInt, NaN and
// ±Infinity as numbers. Everything else is JSON.parse's, the fastest parser there is.

import { DecodeError } from "./errors.js";

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

const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const MAX_DEPTH = 1024; // as orjson, the Python side's parser

class ExactParser {
  private i = 0;
  constructor(private readonly s: string) {}

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

  private number(): number | bigint {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (m === null) this.fail("an unexpected character");
    this.i += m[0].length;
    const n = Number(m[0]);
    if (m[1] === undefined && m[2] === undefined && !Number.isSafeInteger(n)) return BigInt(m[0]);
    return n;
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
      if (key === "__proto__") Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      else out[key] = v;
      this.space();
      const c = this.s[this.i++];
      if (c === "}") return out;
      if (c !== ",") this.fail("a missing ',' or '}'");
    }
  }
}
