// The range decoder's 64-bit arithmetic, held in two Number halves, against the coder of spec
// §1.2 written plainly in BigInt here: random symbols of totals from 1 to 2^40 (the edges of
// each arithmetic path included), with and without a side stream, are coded by the reference
// encoder and must decode to their slots and end in canonical form; corrupted payloads must
// give the reference decoder's slots and verdict, or its DecodeError at the same symbol.

import assert from "node:assert/strict";
import { test } from "node:test";
import { DecodeError } from "../dist/index.js";
import { RangeDecoder } from "../dist/learned.js";

const FLAG = 65536;
const W64 = (1n << 64n) - 1n;

let state = 12345;
function random() {
  state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
  return state / 4294967296;
}
const below = (n) => Math.floor(random() * n);

/** A total from one of the arithmetic paths' ranges, or one of their edges. */
function total() {
  const edges = [1, 2, 3, 2 ** 21 - 1, 2 ** 21, 2 ** 21 + 1, 2 ** 32 - 1, 2 ** 32, 2 ** 40 - 1, 2 ** 40];
  switch (below(4)) {
    case 0:
      return edges[below(edges.length)];
    case 1:
      return 1 + below(300);
    case 2:
      return 1 + Math.floor(2 ** (random() * 21));
    default:
      return Math.min(2 ** 40, 1 + Math.floor(2 ** (random() * 40)));
  }
}

/**
 * [start, freq, total]: a uniform symbol (freq 1, as every total past 2^16 is) or a wide one;
 * often the first or last slot, whose runs put x at an edge of a slot, where the quotient of the
 * rounded halves is one off.
 */
function symbol() {
  const t = total();
  const edge = below(3);
  const start = edge === 0 ? 0 : edge === 1 ? t - 1 : below(t);
  const freq = random() < 0.5 || t > 65536 ? 1 : 1 + below(t - start);
  return [start, freq, t];
}

/** The head's symbols (spec §1.1): the flag, and with `size` side bytes their width and mode 0. */
function head(size) {
  if (size === 0) return [[1, FLAG - 1, FLAG]];
  const width = size.toString(2).length;
  const out = [[0, 1, FLAG], [width, 1, 64]];
  if (width >= 2) out.push([size - 2 ** (width - 1), 1, 2 ** (width - 1)]);
  return [...out, [0, 1, 3]];
}

/** Spec §1.2's encoder, `low` unbounded: the payload, then `side` raw. */
function encode(symbols, side) {
  let low = 0n;
  let range = W64;
  let n = 0;
  for (const [start, freq, t] of [...head(side.length), ...symbols]) {
    const r = range / BigInt(t);
    low += r * BigInt(start);
    range = r * BigInt(freq);
    while (range < 1n << 56n) {
      low <<= 8n;
      range <<= 8n;
      n++;
    }
  }
  const w = low & W64;
  for (let m = 0; m <= 8; m++) {
    const u = 1n << BigInt(64 - 8 * m);
    const k = (w + u - 1n) / u;
    if (side.length > 0 ? (k + 1n) * u <= w + range : k * u < w + range) {
      let v = ((low >> 64n) << BigInt(8 * m)) + k;
      const out = new Uint8Array(n + m + side.length);
      for (let i = n + m - 1; i >= 0; i--, v >>= 8n) out[i] = Number(v & 0xffn);
      out.set(side, n + m);
      return out;
    }
  }
  throw new Error("no termination");
}

/** Spec §1.2's decoder in BigInt, with the interface of the package's. */
class Reference {
  constructor(data) {
    this.data = data;
    this.x = 0n;
    for (let i = 0; i < 8; i++) this.x = (this.x << 8n) | BigInt(data[i] ?? 0);
    this.range = W64;
    this.n = 0;
    let size = 0;
    if (this.peek(FLAG) >= 1) this.take(1, FLAG - 1, FLAG);
    else {
      this.take(0, 1, FLAG);
      const width = this.uniform(64);
      size = width < 2 ? width : 2 ** (width - 1) + this.uniform(2 ** (width - 1));
      if (this.uniform(3) !== 0 || size > data.length) throw new DecodeError("head");
    }
    this.side = size;
    this.arith = data.length - size;
  }
  peek(t) {
    const s = this.x / (this.range / BigInt(t));
    if (s >= BigInt(t)) throw new DecodeError("past the total");
    return Number(s);
  }
  take(start, freq, t) {
    const r = this.range / BigInt(t);
    this.x -= r * BigInt(start);
    this.range = r * BigInt(freq);
    while (this.range < 1n << 56n) {
      this.x = (this.x << 8n) | BigInt(this.data[8 + this.n] ?? 0);
      this.range <<= 8n;
      this.n++;
    }
  }
  uniform(t) {
    if (t > 2 ** 40) {
      // Split in two (§1.2): the high 32-bit part, then the low one.
      const last = BigInt(t) - 1n;
      const h = Number(last >> 32n);
      const hi = this.uniform(h + 1);
      return hi * 2 ** 32 + this.uniform(hi < h ? 2 ** 32 : Number(last & 0xffffffffn) + 1);
    }
    const v = this.peek(t);
    this.take(v, 1, t);
    return v;
  }
  takeBytes(k) {
    if (k !== this.side) throw new DecodeError("side");
  }
  finish() {
    const { data, arith: a, n, x, range } = this;
    const m = a - n;
    const window = (to) => {
      let v = 0n;
      for (let i = n; i < n + 8; i++) v = (v << 8n) | BigInt(i < to ? data[i] : 0);
      return v;
    };
    const p = window(a);
    const xp = x - (window(data.length) - p);
    const u = 1n << BigInt(64 - 8 * m);
    const fits = (y, unit) => (this.side > 0 ? y + unit <= range : y < range);
    let canonical = m >= 0 && m <= 8 && xp >= 0n && xp < u && fits(xp, u);
    for (let mm = 0; canonical && mm < m; mm++) {
      const uu = 1n << BigInt(64 - 8 * mm);
      if (fits(xp + (-p & (uu - 1n)), uu)) canonical = false;
    }
    if (!canonical) throw new DecodeError("not canonical");
  }
}

/** What a decoder makes of a payload: each symbol's slot, then "end" or "error" where it throws. */
function run(open, data, symbols, side) {
  const out = [];
  try {
    const d = open(data);
    for (const [start, freq, t] of symbols) {
      if (freq === 1 && start % 2 === 0) {
        out.push(d.uniform(t)); // peek and take in one
        continue;
      }
      const s = d.peek(t);
      out.push(s);
      // Take the slot's own symbol where the coded one does not hold it, as a model's tables do.
      if (s >= start && s < start + freq) d.take(start, freq, t);
      else d.take(s, 1, t);
    }
    d.takeBytes(side);
    d.finish();
    out.push("end");
  } catch (e) {
    assert.ok(e instanceof DecodeError, String(e));
    out.push("error");
  }
  return out;
}

/** The package's decoder, opened on the payload at an offset of 0-2 bytes into a buffer (a frame's). */
const ours = (data) => {
  const start = below(3);
  const frame = new Uint8Array(start + data.length).fill(0xab);
  frame.set(data, start);
  return new RangeDecoder().open(frame, null, 1 << 20, start);
};
const reference = (data) => new Reference(data);

function sample() {
  const symbols = Array.from({ length: 1 + below(30) }, symbol);
  const side = random() < 0.3 ? Uint8Array.from({ length: 1 + below(20) }, () => below(256)) : new Uint8Array(0);
  return [symbols, side];
}

test("random symbols of every total decode to their slots and end canonical", () => {
  for (let round = 0; round < 2000; round++) {
    const [symbols, side] = sample();
    const payload = encode(symbols, side);
    const d = ours(payload);
    for (const [start, freq, t] of symbols) {
      const s = freq === 1 && start % 2 === 0 ? d.uniform(t) : d.peek(t);
      assert.ok(s >= start && s < start + freq, `slot ${s} outside [${start}, ${start + freq}) of ${t}`);
      if (!(freq === 1 && start % 2 === 0)) d.take(start, freq, t);
    }
    assert.deepEqual(d.takeBytes(side.length), side);
    d.finish();
  }
});

test("corrupted payloads decode as the reference decodes them", () => {
  let rejected = 0;
  for (let round = 0; round < 3000; round++) {
    const [symbols, side] = sample();
    let bad = encode(symbols, side);
    const how = below(3);
    if (how === 0 && bad.length > 0) bad[below(bad.length)] ^= 1 << below(8);
    else if (how === 1 && bad.length > 0) bad = bad.subarray(0, below(bad.length));
    else {
      const junk = Uint8Array.from({ length: 1 + below(12) }, () => (random() < 0.3 ? 255 : below(256)));
      const out = new Uint8Array(bad.length + junk.length);
      out.set(bad);
      out.set(junk, bad.length);
      bad = out;
    }
    const expected = run(reference, bad, symbols, side.length);
    assert.deepEqual(run(ours, bad, symbols, side.length), expected);
    if (expected.at(-1) === "error") rejected++;
  }
  assert.ok(rejected > 1000, `only ${rejected} corruptions rejected`);
});

test("a payload of all ones is a slot past the total, not a crash", () => {
  const ones = new Uint8Array(16).fill(255);
  assert.deepEqual(run(ours, ones, [[0, 1, 2 ** 40]], 0), ["error"]);
});
