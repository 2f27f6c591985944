// Small helpers the decoders share for building values as Python has them.

/** An integer as a number while exact, else a BigInt. */
export function safeInt(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

/** Set a key of a value's object as an own property, "__proto__" included. */
export function setKey(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === "__proto__") Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/** A UTF-16 surrogate without its pair: text with no UTF-8. */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNRESERVED = new Set(Array.from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~/", (c) => c.charCodeAt(0)));
const UTF8 = new TextEncoder();

/**
 * Python's urllib.parse.quote(v, safe="/"): UTF-8 bytes but ASCII letters, digits and `_.-~/`
 * as %XX; null for a string with no UTF-8 (lone surrogates), where Python raises.
 */
export function urlQuote(v: string): string | null {
  if (LONE_SURROGATE.test(v)) return null;
  let out = "";
  for (const b of UTF8.encode(v)) out += UNRESERVED.has(b) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  return out;
}
