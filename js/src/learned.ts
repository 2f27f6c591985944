// Learned-model payloads (spec/LEARNED_MODEL.md) of every model format: the range coder of
// formats 6-8 on 64-bit integers, the exact coder of formats 1-5 on unbounded ones (format
// 5 in blocks), both in BigInt, and every node kind, by the general rules and the common path's.
// The model is data: its tables are checked as the Python reader checks them, then walked;
// nothing from the file is ever evaluated.
//
// Values are compared by type as Python compares them (1 is not 1.0): tables and JSON texts are
// read with parseJSONTyped, whose integral floats are PyFloat objects, and decimals that come
// out integral are made PyFloats too. A decoded value is handed over with them turned back into
// numbers, after its checksum, if the frame has one, is checked against Python's text of it.

import { crc32 } from "./crc32.js";
import { ChecksumMismatch, DecodeError, InvalidDictionary, ZerocError } from "./errors.js";
import { safeInt, setKey, urlQuote } from "./values.js";
import { KEY_ORDER, PyFloat, keepOrder, parseJSONTyped, pythonText, reordered, unwrapFloats } from "./json.js";

const MAX_DIRECT = 2 ** 40;
const LOW32 = (1n << 32n) - 1n;
const FLAG_TOTAL = 1 << 16;
const SIDE_MODES = 3;
const MAX_SYMBOLS = 4096;
const PER_BYTE = 16;
const BLOCK_BITS = 2048n;
const BLOCK_BYTES = 288;
const LEGACY_BYTES = 65552;
const MAX_NODES = 50_000;
const MAX_DEPTH = 64;
const MAX_LOOPS = 16;
const MAX_TABLE = 1 << 16;
const MAX_ENTRIES = 1 << 19;
const MAX_TOTAL = 2 ** 40;
const MAX_SPAN = 1n << 64n;
const MAX_BITS = 64;
const MAX_DIGITS = 30;
const MAX_FIELDS = 32;
const MAX_LENGTH = 1_000_000;
const MAX_WORDS = 10_000;
const MAX_POSITIONS = 8;
const END = 256;
const BYTES = 257;
const UTF8 = new TextDecoder("utf-8", { fatal: true });

type Int = number | bigint;

const int = safeInt;

function isInt(v: unknown): v is Int {
  return typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v));
}

/** Decompress a side stream: `mode` 1 is a zstd-block, 2 a magicless zstd frame. */
export type SideEngine = (mode: number, data: Uint8Array, maxSize: number) => Uint8Array;

// --- the range decoder (spec §1.2) ----------------------------------------------------------------
//
// The 64-bit state is held as two 32-bit halves in Numbers, so that no step makes a BigInt: every
// product and quotient below stays under 2^53, where a double is exact. A symbol's total is at
// most 2^40 (larger ones are split, §1.2); below 2^21 one multiplication covers a half.

const TWO32 = 2 ** 32;
const TWO20 = 2 ** 20;
const INV32 = 2 ** -32;
const SMALL = 2 ** 21;
const BOTTOM_HIGH = 2 ** 24; // range < 2^56: its high half below 2^24
const SURE = 2 ** -9;
const INVERSES = 1024;
const MAX_SLOT = 2 ** 41;

/** The 4 bytes from `at` as a big-endian number, zero from `end` (the data's end) on. */
function be32(data: Uint8Array, at: number, end = data.length): number {
  const k = end - at;
  if (k >= 4) return data[at] * 16777216 + ((data[at + 1] << 16) | (data[at + 2] << 8) | data[at + 3]);
  if (k <= 0) return 0;
  return data[at] * 16777216 + (k > 1 ? data[at + 1] << 16 : 0) + (k > 2 ? data[at + 2] << 8 : 0);
}

const NO_BYTES = new Uint8Array(0);

export class RangeDecoder {
  // The payload: data from `base` on.
  private data: Uint8Array = NO_BYTES;
  private base = 0;
  // x, the payload's place above low, and the range, as high and low halves.
  private xh = 0;
  private xl = 0;
  private rh = 0;
  private rl = 0;
  // `range // total` of the last peek, which the take that follows it (same total) reuses.
  private qh = 0;
  private ql = 0;
  private lastTotal = 0;
  // The last product `mul` made, its high half possibly past 2^32.
  private ph = 0;
  private pl = 0;
  private n = 0;
  private budget = 0;
  private side = false;
  private arith = 0;
  private escaped = NO_ESCAPES;
  private readonly inverseOf = new Float64Array(INVERSES);
  private readonly inverses = new Float64Array(INVERSES);

  /**
   * Start on the payload that is `data` from `start` on (a frame's, past its tag): read its head
   * and set its side stream apart. A model keeps one decoder and opens it for each payload.
   */
  open(data: Uint8Array, engine: SideEngine | null, maxSize: number, start = 0): this {
    const length = data.length - start;
    this.data = data;
    this.base = start;
    this.xh = be32(data, start);
    this.xl = be32(data, start + 4);
    this.rh = TWO32 - 1;
    this.rl = TWO32 - 1;
    this.lastTotal = 0;
    this.n = 0;
    this.budget = MAX_SYMBOLS + PER_BYTE * length;
    this.escaped = NO_ESCAPES;
    const head = readHead(this, length);
    const size = head[0];
    const mode = head[1];
    this.side = size > 0;
    this.arith = length - size;
    // A compressed side stream of no bytes is refused there, as an empty raw one is not.
    if (size > 0 || mode !== 0) this.escaped = new SideStream(sideStream(data.subarray(start), size, mode, engine, maxSize));
    return this;
  }

  /**
   * `range // total` into qh, ql. Below 2^21, the high half and then the remainder's 32 bits
   * with the low half, each a number below 2^53 times 1 / total: the product is within 2^-20 of
   * the quotient, so its floor is at most one off, which the remainder shows. Past 2^21, 11, 11
   * and 10 bits of the low half at a time, each divided: the floor of a double quotient of a
   * number below 2^53 is exact (it would round up to the next integer only from 2^53 on).
   */
  private divide(total: number): void {
    const rl = this.rl;
    this.lastTotal = total;
    if (total < SMALL) {
      const inv = this.inverse(total);
      let qh = Math.floor(this.rh * inv);
      let m = this.rh - qh * total;
      if (m < 0) {
        qh--;
        m += total;
      } else if (m >= total) {
        qh++;
        m -= total;
      }
      const a = m * TWO32 + rl;
      let ql = Math.floor(a * inv);
      const rest = a - ql * total;
      if (rest < 0) ql--;
      else if (rest >= total) ql++;
      this.qh = qh;
      this.ql = ql;
    } else {
      const qh = Math.floor(this.rh / total);
      let m = this.rh - qh * total;
      let a = m * 2048 + (rl >>> 21);
      const q1 = Math.floor(a / total);
      m = a - q1 * total;
      a = m * 2048 + ((rl >>> 10) & 2047);
      const q2 = Math.floor(a / total);
      m = a - q2 * total;
      this.ql = q1 * SMALL + q2 * 1024 + Math.floor((m * 1024 + (rl & 1023)) / total);
      this.qh = qh;
    }
  }

  /** 1 / total, from a cache of the totals met, which a model has few of. */
  private inverse(total: number): number {
    const at = total & (INVERSES - 1);
    if (this.inverseOf[at] === total) return this.inverses[at];
    this.inverseOf[at] = total;
    return (this.inverses[at] = 1 / total);
  }

  /**
   * `a * (qh, ql)` into ph, pl for `a` below 2^41. Exact: past 2^21, `a` is a slot or count of a
   * total past 2^21, so qh is below 2^11.
   */
  private mul(a: number): void {
    const { qh, ql } = this;
    if (a < SMALL) {
      const l = a * ql;
      const c = Math.floor(l * INV32);
      this.pl = l - c * TWO32;
      this.ph = a * qh + c;
    } else {
      const ah = Math.floor(a / TWO20);
      const al = a - ah * TWO20;
      const hl = ah * ql; // times 2^20: its low 12 bits go to the low half
      const hlHigh = Math.floor(hl / 4096);
      const low = al * ql + (hl - hlHigh * 4096) * TWO20;
      const c = Math.floor(low * INV32);
      this.pl = low - c * TWO32;
      this.ph = hlHigh + al * qh + ah * qh * TWO20 + c;
    }
  }

  /** The next symbol's slot among `total` (at most 2^40). */
  peek(total: number): number {
    const { xh, xl } = this;
    if (total < SMALL) {
      // Below 2^21, x * total / range is within 2^-14 of x / r (r is range / total less under
      // one, and range is at least 2^56): its floor is the slot unless it is near an integer.
      // It needs no r, so its division runs beside divide's.
      const e = ((xh * TWO32 + xl) / (this.rh * TWO32 + this.rl)) * total;
      this.divide(total);
      const s = Math.floor(e);
      const f = e - s;
      if (f > SURE && f < 1 - SURE) {
        if (s >= total) throw new DecodeError("learned-model payload is not one this model writes (a slot past the total)");
        return s;
      }
    } else this.divide(total);
    const { qh, ql } = this;
    // x / r from the halves rounded to 53 bits is within 3 * 2^-53 of it relatively, so within
    // 2^-10 while below 2^41: a quotient further than 2^-9 from an integer has the right floor.
    const q = (xh * TWO32 + xl) / (qh * TWO32 + ql);
    let s = Math.floor(q);
    const f = q - s;
    if (f > SURE && f < 1 - SURE && q < MAX_SLOT) {
      if (s >= total) throw new DecodeError("learned-model payload is not one this model writes (a slot past the total)");
      return s;
    }
    // Else x - s * r says whether s is one off.
    this.mul(s);
    let lo = xl - this.pl;
    let hi = xh - this.ph;
    if (lo < 0) {
      lo += TWO32;
      hi--;
    }
    if (hi < 0) s--;
    else if (hi > qh || (hi === qh && lo >= ql)) s++;
    if (s >= total) throw new DecodeError("learned-model payload is not one this model writes (a slot past the total)");
    return s;
  }

  take(start: number, freq: number, total: number): void {
    if (--this.budget < 0) throw new DecodeError("learned-model payload asks for more symbols than it can hold");
    if (total !== this.lastTotal) this.divide(total);
    this.lastTotal = 0;
    if (total < SMALL) {
      // The products of mul's first case, in place.
      const { qh, ql } = this;
      let l = freq * ql;
      let c = Math.floor(l * INV32);
      const rl = l - c * TWO32;
      const rh = freq * qh + c;
      l = start * ql;
      c = Math.floor(l * INV32);
      this.pl = l - c * TWO32;
      this.ph = start * qh + c;
      this.settle(rh, rl);
      return;
    }
    this.mul(freq);
    const rh = this.ph;
    const rl = this.pl;
    this.mul(start);
    this.settle(rh, rl);
  }

  /** x less the last product, and the range (rh, rl), then renormalised. */
  private settle(rh: number, rl: number): void {
    let xl = this.xl - this.pl;
    let xh = this.xh - this.ph;
    if (xl < 0) {
      xl += TWO32;
      xh--;
    }
    if (xh < 0) throw new DecodeError("learned-model payload is not one this model writes (a symbol past its slot)");
    while (rh < BOTTOM_HIGH) {
      const at = this.base + 8 + this.n++;
      rh = rh * 256 + (rl >>> 24);
      rl = (rl & 0xffffff) * 256;
      xh = xh * 256 + (xl >>> 24);
      xl = (xl & 0xffffff) * 256 + (at < this.data.length ? this.data[at] : 0);
    }
    this.xh = xh;
    this.xl = xl;
    this.rh = rh;
    this.rl = rl;
  }

  /** A uniform symbol of `n` values (split in two past 2^40). */
  uniform(n: Int): Int {
    if (typeof n === "number" && n <= MAX_DIRECT) {
      // peek then take(v, 1, n): the range becomes r itself.
      const v = this.peek(n);
      if (--this.budget < 0) throw new DecodeError("learned-model payload asks for more symbols than it can hold");
      this.lastTotal = 0;
      this.mul(v);
      this.settle(this.qh, this.ql);
      return v;
    }
    const big = BigInt(n);
    const h = (big - 1n) >> 32n;
    const hi = BigInt(this.uniform(int(h + 1n)));
    const lo = BigInt(this.uniform(hi < h ? 2 ** 32 : Number((big - 1n) & LOW32) + 1));
    return int((hi << 32n) | lo);
  }

  /** Items and words of the common path, which count as symbols. */
  spend(items: number): void {
    this.budget -= items;
    if (this.budget < 0) throw new DecodeError("learned-model payload asks for more items than it can hold");
  }

  takeBytes(n: number): Uint8Array {
    return this.escaped.take(n);
  }

  /**
   * The side stream read to its end, and the arithmetic part in canonical form (§1.2's test, on
   * halves: a high half may pass 2^32 where a sum does, still exact).
   */
  finish(): void {
    this.escaped.finish();
    const { data, arith: a, n, side, rh, rl } = this;
    const m = a - n;
    let canonical = m >= 0 && m <= 8;
    if (canonical) {
      // p: the window of the a bytes alone; x' = x less what the side bytes add to the window.
      const at = this.base + n;
      const ph = be32(data, at, this.base + a);
      const pl = be32(data, at + 4, this.base + a);
      let xh = this.xh;
      let xl = this.xl;
      if (side) {
        xh -= be32(data, at) - ph;
        xl -= be32(data, at + 4) - pl;
        if (xl < 0) {
          xl += TWO32;
          xh--;
        }
      }
      const uh = POW_HIGH[64 - 8 * m];
      const ul = POW_LOW[64 - 8 * m];
      canonical = xh >= 0 && below(xh, xl, uh, ul) && (side ? !below(rh, rl, xh + uh, xl + ul) : below(xh, xl, rh, rl));
      for (let mm = 0; canonical && mm < m; mm++) {
        // y = x' + (-p mod 2^e): the number rounded up to n + mm bytes.
        const e = 64 - 8 * mm;
        const eh = POW_HIGH[e];
        const el = POW_LOW[e];
        const vh = e >= 32 ? ph % eh : 0;
        const vl = e >= 32 ? pl : pl % el;
        let yh = xh;
        let yl = xl;
        if (vh !== 0 || vl !== 0) {
          yh += eh - vh;
          yl += el - vl;
        }
        if (side) {
          yh += eh;
          yl += el;
        }
        if (side ? !below(rh, rl, yh, yl) : below(yh, yl, rh, rl)) canonical = false;
      }
    }
    if (!canonical) throw new DecodeError("learned-model payload is not in canonical form (corrupt or wrong model)");
  }
}

/** 2^e (e in 0..64) as high and low halves. */
const POW_HIGH = Array.from({ length: 65 }, (_, e) => (e >= 32 ? 2 ** (e - 32) : 0));
const POW_LOW = Array.from({ length: 65 }, (_, e) => (e >= 32 ? 0 : 2 ** e));

/** (ah, al) < (bh, bl), the low halves any size below 2^53 (carried into the high ones here). */
function below(ah: number, al: number, bh: number, bl: number): boolean {
  const ac = Math.floor(al * INV32);
  const bc = Math.floor(bl * INV32);
  ah += ac;
  al -= ac * TWO32;
  bh += bc;
  bl -= bc * TWO32;
  return ah < bh || (ah === bh && al < bl);
}

const NO_SIDE: readonly [number, number] = [0, 0];

/** A payload's head (spec §1.1): the side stream's [size, mode], [0, 0] without one. */
function readHead(d: Coder, length: number): readonly [number, number] {
  if (d.peek(FLAG_TOTAL) >= 1) {
    d.take(1, FLAG_TOTAL - 1, FLAG_TOTAL);
    return NO_SIDE;
  }
  d.take(0, 1, FLAG_TOTAL);
  const width = Number(d.uniform(64));
  const size = width < 2 ? width : 2 ** (width - 1) + Number(d.uniform(2 ** (width - 1)));
  const mode = Number(d.uniform(SIDE_MODES));
  if (size > length) throw new DecodeError("side stream is longer than the payload");
  return [size, mode];
}

/** The last `size` bytes of a payload as the side stream's content. */
function sideStream(data: Uint8Array, size: number, mode: number, engine: SideEngine | null, maxSize: number): Uint8Array {
  const raw = data.subarray(data.length - size);
  if (mode === 0) return raw;
  if (engine === null) throw new DecodeError("side stream is compressed and this model has no dictionary");
  const out = engine(mode, raw, maxSize);
  if (out.length <= size) throw new DecodeError("compressed side stream is not smaller than its content");
  return out;
}

/** A payload's side stream, read from its start: escaped values' JSON texts, in order. */
class SideStream {
  private pos = 0;
  constructor(private readonly buf: Uint8Array) {}

  take(n: number): Uint8Array {
    if (n < 0 || this.pos + n > this.buf.length) throw new DecodeError("escaped bytes run past the side stream");
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** It must have been read to its end. */
  finish(): void {
    if (this.pos !== this.buf.length) throw new DecodeError("learned-model payload has unread escaped bytes");
  }
}

/** The side stream of every payload without one: nothing to take, so never changed. */
const NO_ESCAPES = new SideStream(NO_BYTES);


function bitlen(v: bigint): number {
  return v === 0n ? 0 : v.toString(2).length;
}

/** The canonical [n, k] of an interval (spec §1.1): k / 256^n in it, n counted up from its bound. */
function shortest(low: bigint, rng: bigint, den: bigint, contained: boolean): [number, bigint] {
  let n = Math.floor((bitlen(den) - bitlen(rng)) / 8);
  const high = low + rng;
  for (;; n++) {
    const shift = BigInt(8 * n);
    const a = low << shift;
    const k = (a + den - 1n) / den; // ceil, a >= 0
    if (contained ? (k + 1n) * den <= high << shift : k * den < high << shift) return [n, k];
  }
}

function bytesOf(k: bigint, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = n - 1; i >= 0; i--) {
    out[i] = Number(k & 0xffn);
    k >>= 8n;
  }
  return out;
}

function bigOf(data: Uint8Array, from: number, to: number): bigint {
  let v = 0n;
  for (let i = from; i < to; i++) v = (v << 8n) | BigInt(data[i]);
  return v;
}

/**
 * The exact coder's decoder (formats 1-5, spec §1.1): the payload read as the fraction
 * num / scale, the position in the interval as x / R. With `blocks` (format 5), one block of at
 * most 288 bytes at a time, each checked to be the canonical number of its interval.
 */
export class ExactDecoder {
  private blocks = false;
  private arith: number;
  private budget: number;
  private readonly escaped: SideStream;
  private start = 0;
  private num = 0n;
  private scale = 1n;
  private x = 0n;
  private R = 1n;
  private den = 1n;
  private bden = 1n;
  private brng = 1n;
  /** Set while the common path is decoded: in format 5 it must end in its first block. */
  common = false;
  readonly side: boolean;

  constructor(
    private readonly data: Uint8Array,
    engine: SideEngine | null,
    maxSize: number,
    blocks: boolean,
  ) {
    this.arith = data.length;
    this.load(0, Math.min(data.length, blocks ? BLOCK_BYTES : LEGACY_BYTES));
    this.budget = MAX_SYMBOLS + 8 + (blocks ? PER_BYTE * data.length : 0);
    const [size, mode] = readHead(this, data.length);
    this.side = size > 0;
    this.arith = data.length - size;
    if (!blocks && this.arith > LEGACY_BYTES) throw new DecodeError("learned-model payload is longer than any of its format");
    this.blocks = blocks;
    this.bden = this.brng = 1n;
    this.escaped = new SideStream(sideStream(data, size, mode, engine, maxSize));
  }

  private load(start: number, end: number): void {
    this.start = start;
    this.num = bigOf(this.data, start, end);
    this.scale = 1n << BigInt(8 * (end - start));
    this.x = this.num;
    this.R = this.scale;
    this.den = this.bden = this.brng = 1n;
  }

  private nextBlock(): void {
    if (this.common) throw new DecodeError("learned-model payload's common path does not end in its first block");
    const low = (this.num * this.den - this.x) / this.scale;
    const [n, k] = shortest(low, this.R / this.scale, this.den, true);
    const end = this.start + n;
    const written = bytesOf(k, n);
    if (end > this.arith || written.some((b, i) => this.data[this.start + i] !== b)) {
      throw new DecodeError("learned-model payload is not in canonical form (a block ends otherwise)");
    }
    this.load(end, Math.min(this.arith, end + BLOCK_BYTES));
  }

  peek(total: Int): number {
    return Number((this.x * BigInt(total)) / this.R);
  }

  take(start: Int, freq: Int, total: Int): void {
    if (--this.budget < 0) throw new DecodeError("learned-model payload asks for more symbols than it can hold");
    const t = BigInt(total);
    const f = BigInt(freq);
    this.x = this.x * t - BigInt(start) * this.R;
    this.R *= f;
    this.den *= t;
    if (this.blocks) {
      this.bden *= t;
      this.brng *= f;
      if (this.bden > this.brng << BLOCK_BITS) this.nextBlock();
    }
  }

  uniform(n: Int): Int {
    const v = (this.x * BigInt(n)) / this.R;
    this.take(v, 1, n);
    return int(v);
  }

  spend(): void {
    // Formats 1-5 count no items on the common path (spec §1.2 added that for format 6).
  }

  takeBytes(n: number): Uint8Array {
    return this.escaped.take(n);
  }

  finish(): void {
    this.escaped.finish();
    const contained = this.arith !== this.data.length;
    const arith = this.arith - this.start;
    if (!contained && this.scale !== 1n << BigInt(8 * arith)) {
      throw new DecodeError("learned-model payload is not in canonical form (longer than its last block)");
    }
    const { num, scale, x, R, den } = this;
    let canonical: boolean;
    if (!contained) {
      // The payload sits at x/R of the final interval: canonical when it is the smallest number
      // of its length there (x < den) and no shorter length would do.
      const n0 = Math.floor((bitlen(den) - (bitlen(R) - 8 * arith)) / 8);
      canonical = n0 <= arith && x < den;
      for (let n = n0; canonical && n < arith; n++) {
        const mask = (1n << BigInt(8 * (arith - n))) - 1n;
        if (x + (-num & mask) * den < R) canonical = false;
      }
    } else {
      const low = (num * den - x) / scale;
      const [n, k] = shortest(low, R / scale, den, true);
      canonical = n === arith && (n === 0 || bigOf(this.data, this.start, this.start + n) === k);
    }
    if (!canonical) throw new DecodeError("learned-model payload is not in canonical form (corrupt or wrong model)");
  }
}

/** What the nodes decode with: either coder. */
interface Coder {
  peek(total: Int): number;
  take(start: Int, freq: Int, total: Int): void;
  uniform(n: Int): Int;
  spend(items: number): void;
  takeBytes(n: number): Uint8Array;
}

type D = Coder;

// --- values ---------------------------------------------------------------------------------------

/** A key that tells "1" from 1 and true, 1 from 1.0, and 0.0 from -0.0 (Python's as_key). */
function keyOf(v: unknown): string {
  if (v === null) return "z";
  if (v instanceof PyFloat) return "f" + (Object.is(v.value, -0) ? "-0" : String(v.value));
  switch (typeof v) {
    case "string":
      return "s" + v;
    case "boolean":
      return v ? "t" : "f";
    case "number":
      return (Number.isInteger(v) ? "n" : "f") + String(v); // a non-integral number is a float
    case "bigint":
      return "n" + v.toString();
    default:
      return "j" + dumps(v);
  }
}

function dumps(v: unknown): string {
  return new TextDecoder().decode(pythonText(v));
}

/** A copy of a table's value the caller may change. */
function copy(v: unknown): unknown {
  if (typeof v !== "object" || v === null || v instanceof PyFloat) return v;
  if (Array.isArray(v)) return v.map(copy);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) setKey(out, k, copy(x));
  const order = (v as { [KEY_ORDER]?: string[] })[KEY_ORDER];
  if (order !== undefined) keepOrder(out, order);
  return out;
}


function getRaw(d: D): unknown {
  const width = Number(d.uniform(64));
  const n = width === 0 ? 0 : width === 1 ? 1 : 2 ** (width - 1) + Number(d.uniform(2 ** (width - 1)));
  return parseJSONTyped(d.takeBytes(n));
}

// --- nodes -----------------------------------------------------------------------------------------

interface Node {
  decode(d: D): unknown;
  decodeCommon(d: D): unknown;
}

class Raw implements Node {
  decode(d: D): unknown {
    return getRaw(d);
  }
  decodeCommon(): unknown {
    throw new DecodeError("learned-model payload says common path where the model has none");
  }
}

abstract class Escaping implements Node {
  other: Node | null = null;
  constructor(
    readonly esc: number,
    readonly total: number,
  ) {}
  abstract get(d: D, common: boolean): unknown;
  decodeCommon(d: D): unknown {
    return this.get(d, true);
  }
  decode(d: D): unknown {
    const slot = d.peek(this.total);
    if (slot < this.esc) {
      d.take(0, this.esc, this.total);
      return this.other === null ? getRaw(d) : this.other.decode(d);
    }
    d.take(this.esc, this.total - this.esc, this.total);
    return this.get(d, false);
  }
}

function dec(node: Node, d: D, common: boolean): unknown {
  return common ? node.decodeCommon(d) : node.decode(d);
}

class Categorical implements Node {
  readonly starts: number[] = [];
  readonly freqs: number[] = [];
  readonly total: number;
  sure = false;
  private readonly mutable: boolean;

  constructor(
    readonly values: unknown[],
    counts: number[],
    readonly esc: number,
    readonly fallback: Node,
  ) {
    let pos = esc;
    for (const c of counts) {
      this.starts.push(pos);
      this.freqs.push(c);
      pos += c;
    }
    this.total = pos;
    this.mutable = values.some((v) => typeof v === "object" && v !== null);
  }

  private leaves(): boolean {
    return this.sure || this.fallback instanceof Raw;
  }

  private entry(d: D, slot: number, shift: number): unknown {
    const s = this.starts;
    let lo = 0;
    let hi = s.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid] <= slot) lo = mid;
      else hi = mid - 1;
    }
    d.take(s[lo] - shift, this.freqs[lo], this.total - shift);
    return this.mutable ? copy(this.values[lo]) : this.values[lo];
  }

  decodeCommon(d: D): unknown {
    if (this.leaves()) {
      if (this.values.length === 1) return this.mutable ? copy(this.values[0]) : this.values[0];
      return this.entry(d, d.peek(this.total - this.esc) + this.esc, this.esc);
    }
    const slot = d.peek(this.total);
    if (slot < this.esc) {
      d.take(0, this.esc, this.total);
      return this.fallback.decodeCommon(d);
    }
    return this.entry(d, slot, 0);
  }

  decode(d: D): unknown {
    const slot = d.peek(this.total);
    if (slot < this.esc) {
      d.take(0, this.esc, this.total);
      return this.fallback.decode(d);
    }
    return this.entry(d, slot, 0);
  }
}

class IntRange extends Escaping {
  constructor(
    readonly lo: Int,
    readonly span: Int,
    esc: number,
    hits: number,
  ) {
    super(esc, esc + hits);
  }
  get(d: D): unknown {
    const v = d.uniform(this.span);
    if (typeof v === "number" && typeof this.lo === "number") {
      const s = this.lo + v;
      if (Number.isSafeInteger(s)) return s;
    }
    return int(BigInt(this.lo) + BigInt(v));
  }
}

class Magnitude extends Escaping {
  constructor(
    readonly buckets: Node,
    esc: number,
    hits: number,
  ) {
    super(esc, esc + hits);
  }
  get(d: D, common: boolean): unknown {
    const b = dec(this.buckets, d, common);
    if (typeof b !== "number" || !Number.isInteger(b) || Math.abs(b) > MAX_BITS) {
      throw new DecodeError(`learned-model payload has magnitude bucket ${String(b)} (at most ±${MAX_BITS})`);
    }
    if (Math.abs(b) < 2) return b;
    const half = 2n ** BigInt(Math.abs(b) - 1);
    const v = half + BigInt(d.uniform(int(half)));
    return int(b > 0 ? v : -v);
  }
}

class Decimal extends Escaping {
  constructor(
    readonly scale: number,
    readonly inner: Node,
    esc: number,
    hits: number,
  ) {
    super(esc, esc + hits);
  }
  get(d: D, common: boolean): unknown {
    const i = dec(this.inner, d, common);
    if (!isInt(i)) throw new DecodeError("decimal field decoded to a non-integer");
    const v = Number(i) / 10 ** this.scale;
    return Number.isInteger(v) ? new PyFloat(v) : v;
  }
}

class Template extends Escaping {
  constructor(
    readonly prefix: string,
    readonly width: number,
    readonly inner: Node,
    esc: number,
    hits: number,
  ) {
    super(esc, esc + hits);
  }
  get(d: D, common: boolean): unknown {
    const i = dec(this.inner, d, common);
    if (!isInt(i) || BigInt(i) < 0n || BigInt(i) >= 10n ** BigInt(this.width || MAX_DIGITS)) {
      throw new DecodeError("template digits out of range");
    }
    const digits = String(i);
    return this.prefix + (this.width ? digits.padStart(this.width, "0") : digits);
  }
}

const LETTERS = /^[A-Za-z]+$/;
const DIGITS = /^[0-9]+$/;

class Shape extends Escaping {
  constructor(
    readonly literals: string[],
    readonly kinds: string,
    readonly children: Node[],
    esc: number,
    hits: number,
  ) {
    super(esc, esc + hits);
  }
  get(d: D, common: boolean): unknown {
    let out = this.literals[0];
    for (let i = 0; i < this.children.length; i++) {
      const field = dec(this.children[i], d, common);
      if (typeof field !== "string" || !(this.kinds[i] === "a" ? LETTERS : DIGITS).test(field)) {
        throw new DecodeError(`learned-model payload has a shape field ${JSON.stringify(field)} not of its kind`);
      }
      out += field + this.literals[i + 1];
    }
    return out;
  }
}

class Words extends Escaping {
  constructor(
    readonly count: Node,
    readonly words: Categorical[],
    esc: number,
    hits: number,
    readonly tokens: boolean,
  ) {
    super(esc, esc + hits);
  }
  get(d: D, common: boolean): unknown {
    const n = dec(this.count, d, common);
    if (typeof n !== "number" || !Number.isInteger(n) || !(n > 0 && n <= MAX_WORDS)) throw new DecodeError("word count out of range");
    if (common) d.spend(n);
    const parts: string[] = [];
    for (let i = 0; i < n; i++) {
      const w = dec(this.words[Math.min(i, this.words.length - 1)], d, common);
      if (typeof w !== "string" || !w) throw new DecodeError("a word decoded to a non-string");
      parts.push(w);
    }
    const out = parts.join(this.tokens ? "" : " ");
    if (!this.tokens && (out.includes("  ") || out.startsWith(" ") || out.endsWith(" "))) {
      throw new DecodeError("words decoded to a text the model cannot have written");
    }
    return out;
  }
}

abstract class Rule extends Escaping {
  sure = false;
  /** Model format 1: the rule codes its symbol even when its table has no entry for the source. */
  legacy = false;
  constructor(
    readonly source: number,
    other: Node,
    esc: number,
    hits: number,
  ) {
    super(esc, esc + hits);
    this.other = other;
  }
  /** Whether the rule has a prediction for this source value (tables: an entry for it). */
  predicts(_src: unknown): boolean {
    return true;
  }
  abstract value(d: D, src: unknown, common: boolean): unknown;

  decodeIn(d: D, context: unknown[], common: boolean): unknown {
    const src = this.source < context.length ? context[this.source] : MISSING;
    const other = this.other!;
    if (!this.legacy && !this.predicts(src)) return dec(other, d, common);
    if (!common || !(this.sure || other instanceof Raw)) {
      const slot = d.peek(this.total);
      if (slot < this.esc) {
        d.take(0, this.esc, this.total);
        return dec(other, d, common);
      }
      d.take(this.esc, this.total - this.esc, this.total);
    }
    return this.value(d, src, common);
  }
  get(): unknown {
    throw new DecodeError("a rule outside an object");
  }
  decode(d: D): unknown {
    return this.decodeIn(d, [], false);
  }
  decodeCommon(d: D): unknown {
    return this.decodeIn(d, [], true);
  }
}

const MISSING = Symbol("missing");

/** A value `==` tells apart from every other of its type (not 0, NaN or containers). */
function plain(v: unknown): boolean {
  if (v instanceof PyFloat) return v.value !== 0;
  if (v === null || typeof v === "string" || typeof v === "boolean" || typeof v === "bigint") return true;
  return typeof v === "number" && (Number.isInteger(v) || (v === v && v !== 0));
}

abstract class Predicted extends Rule {
  abstract compute(src: unknown): unknown;
  value(_d: D, src: unknown, common: boolean): unknown {
    const p = this.compute(src);
    if (p === MISSING) throw new DecodeError("a predicted field has no prediction");
    if (common && typeof p !== "string" && (p === 0 || p === 0n || p === false || (p instanceof PyFloat && p.value === 0))) {
      throw new DecodeError("a predicted field has no prediction on the common path");
    }
    return copy(p);
  }
}

class Given extends Predicted {
  constructor(
    source: number,
    readonly table: Map<string, unknown>,
    other: Node,
    esc: number,
    hits: number,
  ) {
    super(source, other, esc, hits);
  }
  compute(src: unknown): unknown {
    const k = keyOf(src);
    return this.table.has(k) ? this.table.get(k) : MISSING;
  }
  predicts(src: unknown): boolean {
    return src !== MISSING && this.table.has(keyOf(src));
  }
  value(d: D, src: unknown, common: boolean): unknown {
    if (common) {
      const p = this.compute(src);
      if (p === MISSING || !plain(p)) throw new DecodeError("a given field has no plain prediction on the common path");
      return p;
    }
    return super.value(d, src, false);
  }
}

class Affix extends Predicted {
  numeric = false;
  constructor(
    source: number,
    readonly prefix: string,
    readonly suffix: string,
    readonly quoted: boolean,
    other: Node,
    esc: number,
    hits: number,
  ) {
    super(source, other, esc, hits);
  }
  compute(src: unknown): unknown {
    let s: string;
    if (this.numeric) {
      if (!isInt(src) || typeof src === "boolean") return MISSING;
      const b = BigInt(src);
      if (b <= -MAX_SPAN || b >= MAX_SPAN) return MISSING;
      s = b.toString();
    } else if (typeof src === "string") {
      s = src;
    } else {
      return MISSING;
    }
    return this.prefix + (this.quoted ? (urlQuote(s) ?? "\0") : s) + this.suffix; // "\0": as Python's url_quote
  }
}

/** Python's round(x, n) for a float: the exact binary value rounded half to even at n decimals. */
function roundHalfEven(x: number, n: number): number {
  if (!Number.isFinite(x) || Number.isInteger(x)) return x;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const negative = bits >> 63n === 1n;
  const exp = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  let e2 = exp - 1075;
  if (exp === 0) e2 = -1074;
  else mant |= 1n << 52n;
  // |x| = mant * 2^e2 with e2 < 0 here (x is not an integer); scaled = mant * 10^n / 2^-e2.
  const num = mant * 10n ** BigInt(n);
  const den = 1n << BigInt(-e2);
  let q = num / den;
  const rem2 = 2n * (num - q * den);
  if (rem2 > den || (rem2 === den && q % 2n === 1n)) q += 1n;
  const digits = q.toString().padStart(n + 1, "0");
  const text = n ? `${digits.slice(0, -n)}.${digits.slice(-n)}` : digits;
  return Number((negative ? "-" : "") + text);
}

class SumOf extends Predicted {
  constructor(
    source: number,
    readonly a: string,
    readonly b: string,
    readonly scale: number,
    other: Node,
    esc: number,
    hits: number,
  ) {
    super(source, other, esc, hits);
  }
  compute(src: unknown): unknown {
    // Python: total = 0; total += x[a] * x[b] for x in source; a float total rounded.
    let items: unknown[];
    if (Array.isArray(src)) items = src;
    else if (typeof src === "string" || (typeof src === "object" && src !== null)) {
      if ((typeof src === "string" ? src.length : Object.keys(src).length) > 0) return MISSING;
      items = [];
    } else return MISSING;
    let total: number | bigint = 0n;
    let float = false;
    const num = (v: unknown): number | bigint | PyFloat | null =>
      typeof v === "boolean" ? BigInt(v) : typeof v === "bigint" || typeof v === "number" || v instanceof PyFloat ? v : null;
    const isFloat = (v: number | bigint | PyFloat) => v instanceof PyFloat || (typeof v === "number" && !Number.isInteger(v));
    const val = (v: number | bigint | PyFloat) => (v instanceof PyFloat ? v.value : Number(v));
    for (const x of items) {
      if (typeof x !== "object" || x === null || Array.isArray(x)) return MISSING;
      const o = x as Record<string, unknown>;
      if (!Object.prototype.hasOwnProperty.call(o, this.a) || !Object.prototype.hasOwnProperty.call(o, this.b)) return MISSING;
      const u = num(o[this.a]);
      const v = num(o[this.b]);
      if (u === null || v === null) return MISSING;
      if (!float && !isFloat(u) && !isFloat(v)) {
        total = (total as bigint) + BigInt(u as number | bigint) * BigInt(v as number | bigint);
      } else {
        float = true;
        total = Number(total) + val(u) * val(v);
      }
    }
    if (!float) return int(total as bigint);
    const r = roundHalfEven(total as number, this.scale);
    return Number.isInteger(r) ? new PyFloat(r) : r;
  }
}

class Prefixed extends Rule {
  constructor(
    source: number,
    readonly table: Map<string, string>,
    readonly rest: Node,
    other: Node,
    esc: number,
    hits: number,
  ) {
    super(source, other, esc, hits);
  }
  predicts(src: unknown): boolean {
    return src !== MISSING && this.table.has(keyOf(src));
  }
  value(d: D, src: unknown, common: boolean): unknown {
    const prefix = src === MISSING ? undefined : this.table.get(keyOf(src));
    const rest = dec(this.rest, d, common);
    if (prefix === undefined || typeof rest !== "string") throw new DecodeError("a prefixed field cannot be rebuilt");
    return prefix + rest;
  }
}

/** Decodes an object's children into an object of its keys: the general rules' or the common path's. */
type ObjectMaker = (children: Node[], d: D) => Record<string, unknown>;

/**
 * For each path, a function made for one key order: it decodes the children in order (a rule
 * given the values before it) into an object literal of the keys. Each child's call is then a
 * call site of its own, and every object of the order has one shape from the start. Keys are
 * written as JSON string literals, so the model's text is never code. Null where a key needs
 * setKey ("__proto__", which a literal would take for the prototype) or where the page's
 * Content-Security-Policy forbids making functions: the object is then built field by field.
 */
function objectMakers(keys: string[], children: Node[]): [ObjectMaker, ObjectMaker] | null {
  if (keys.includes("__proto__")) return null;
  const rules = children.some((c) => c instanceof Rule);
  const make = (common: boolean): ObjectMaker => {
    const call = (i: number) =>
      children[i] instanceof Rule ? `c[${i}].decodeIn(d, x, ${common})` : `c[${i}].${common ? "decodeCommon" : "decode"}(d)`;
    const fields = keys.map((k, i) => `${JSON.stringify(k)}: ${rules ? `x[${i}]` : call(i)}`).join(", ");
    const body = rules ? `const x = [];\n${keys.map((_, i) => `x.push(${call(i)});`).join("\n")}\n` : "";
    return new Function("c", "d", `"use strict";\n${body}return {${fields}};`) as ObjectMaker;
  };
  try {
    return [make(false), make(true)];
  } catch {
    return null;
  }
}

class ObjectNode extends Escaping {
  private readonly reordered: boolean;
  // Made on first use, so that a model of many objects makes functions only for those it meets.
  private makers: [ObjectMaker, ObjectMaker] | null | undefined = undefined;
  constructor(
    readonly keys: string[],
    readonly children: Node[],
    esc: number,
    hits: number,
    other: Node | null,
    private readonly chained: boolean = false,
  ) {
    super(esc, esc + hits);
    this.other = other;
    this.reordered = reordered(keys);
  }
  decodeCommon(d: D): unknown {
    if (!this.chained || this.other === null) return this.get(d, true);
    // Format 8: the hit or the escape, then this key order's children or the next order's object.
    if (d.peek(this.total) < this.esc) {
      d.take(0, this.esc, this.total);
      return this.other.decodeCommon(d);
    }
    d.take(this.esc, this.total - this.esc, this.total);
    return this.get(d, true);
  }
  get(d: D, common: boolean): unknown {
    const { children, keys } = this;
    let out: Record<string, unknown>;
    if (this.makers === undefined) this.makers = objectMakers(keys, children);
    if (this.makers !== null) out = this.makers[common ? 1 : 0](children, d);
    else {
      const context: unknown[] = [];
      for (const child of children) {
        context.push(child instanceof Rule ? child.decodeIn(d, context, common) : dec(child, d, common));
      }
      out = {};
      for (let i = 0; i < keys.length; i++) setKey(out, keys[i], context[i]);
    }
    keepOrder(out, keys, this.reordered);
    return out;
  }
}

class MapNode extends Escaping {
  constructor(
    readonly count: Node,
    readonly key: Node,
    readonly value: Node,
    esc: number,
    hits: number,
  ) {
    super(esc, esc + hits);
  }
  decodeCommon(): unknown {
    throw new DecodeError("learned-model payload says common path where the model has none");
  }
  get(d: D): unknown {
    const n = this.count.decode(d);
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > MAX_LENGTH) throw new DecodeError("map size out of range");
    const out: Record<string, unknown> = {};
    const keys: string[] = [];
    for (let i = 0; i < n; i++) {
      const k = this.key.decode(d);
      if (typeof k !== "string" || Object.prototype.hasOwnProperty.call(out, k)) throw new DecodeError("a map key is not a new string");
      setKey(out, k, this.value.decode(d));
      keys.push(k);
    }
    keepOrder(out, keys);
    return out;
  }
}

class ArrayNode extends Escaping {
  constructor(
    readonly lengths: Node,
    readonly item: Node,
    esc: number,
    hits: number,
  ) {
    super(esc, esc + hits);
  }
  get(d: D, common: boolean): unknown {
    const n = dec(this.lengths, d, common);
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > MAX_LENGTH) throw new DecodeError("array length out of range");
    if (common) d.spend(n);
    const out = new Array(n);
    for (let i = 0; i < n; i++) out[i] = dec(this.item, d, common);
    return out;
  }
}

class CharTable {
  readonly starts: number[] = [];
  readonly freqs: number[] = [];
  readonly listed = new Set<number>();
  readonly total: number;
  constructor(
    readonly esc: number,
    readonly symbols: number[],
    counts: number[],
  ) {
    let pos = esc;
    for (let i = 0; i < symbols.length; i++) {
      this.starts.push(pos);
      this.freqs.push(counts[i]);
      this.listed.add(symbols[i]);
      pos += counts[i];
    }
    this.total = pos;
  }
  /** Take the symbol whose slots hold `slot` (at least esc); returns the symbol. */
  take(d: D, slot: number): number {
    const s = this.starts;
    let lo = 0;
    let hi = s.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid] <= slot) lo = mid;
      else hi = mid - 1;
    }
    d.take(s[lo], this.freqs[lo], this.total);
    return this.symbols[lo];
  }
}

class Chars extends Escaping {
  constructor(
    readonly tables: Map<number, CharTable>,
    readonly base: CharTable,
    esc: number,
    hits: number,
  ) {
    super(esc, esc + hits);
  }
  get(d: D): unknown {
    const out: number[] = [];
    let before = END;
    const base = this.base;
    for (;;) {
      const table = this.tables.get(before);
      let x: number;
      if (table !== undefined) {
        const slot = d.peek(table.total);
        if (slot >= table.esc) {
          x = table.take(d, slot);
          if (x === END) break;
          out.push(x);
          before = x;
          continue;
        }
        d.take(0, table.esc, table.total);
      }
      const slot = d.peek(base.total);
      if (slot >= base.esc) {
        x = base.take(d, slot);
      } else {
        d.take(0, base.esc, base.total);
        x = Number(d.uniform(BYTES));
        if (base.listed.has(x)) throw new DecodeError("chars: an escape to a byte its table lists");
      }
      if (table !== undefined && table.listed.has(x)) throw new DecodeError("chars: an escape to a byte its table lists");
      if (x === END) break;
      out.push(x);
      before = x;
    }
    try {
      return UTF8.decode(Uint8Array.from(out));
    } catch {
      throw new DecodeError("chars: the bytes are not UTF-8");
    }
  }
}

// --- reading a model (spec §2) -------------------------------------------------------------------

type Doc = Record<string, unknown>;

class Reader {
  private nodes = 0;
  private entries = 0;
  constructor(private readonly version: number) {}

  private fail(what: string): never {
    throw new InvalidDictionary(`learned model: ${what}`);
  }

  private spend(n: number): void {
    this.entries += n;
    if (this.entries > MAX_ENTRIES) this.fail(`more than ${MAX_ENTRIES} table entries`);
  }

  private integer(d: Doc, key: string, lo: number, hi: number): number {
    const v = d[key];
    if (typeof v !== "number" || !Number.isInteger(v) || v < lo || v > hi) this.fail(`${String(d.kind)}.${key} must be an integer in ${lo}..${hi}`);
    return v;
  }

  private text(d: Doc, key: string, most = 4096): string {
    const v = d[key];
    if (typeof v !== "string" || v.length > most) this.fail(`${String(d.kind)}.${key} must be a string of at most ${most} characters`);
    return v;
  }

  private sure(d: Doc): boolean {
    const v = d.sure ?? false;
    if (typeof v !== "boolean" || (v && this.version < 2)) this.fail(`${String(d.kind)}.sure must be a boolean, and appears from format 2 on`);
    return v;
  }

  private since(version: number, what: string): void {
    if (this.version < version) this.fail(`${what} appears from format ${version} on`);
  }

  private counts(d: Doc): [number, number] {
    const esc = this.integer(d, "esc", 1, MAX_TOTAL);
    const hits = this.integer(d, "hits", 1, MAX_TOTAL);
    if (this.version >= 6 && esc + hits > MAX_TOTAL) this.fail(`${String(d.kind)}: esc + hits must be at most ${MAX_TOTAL}`);
    return [esc, hits];
  }

  private pairs(d: Doc): [string, unknown][] {
    const table = d.table;
    if (!Array.isArray(table) || table.length > MAX_TABLE) this.fail(`${String(d.kind)}.table must be a list of at most ${MAX_TABLE} pairs`);
    this.spend(table.length);
    return table.map((p) => {
      if (!Array.isArray(p) || p.length !== 2) this.fail(`${String(d.kind)}.table holds a non-pair`);
      return [keyOf(p[0]), p[1]];
    });
  }

  private charTable(d: unknown, context: boolean): [number, CharTable] {
    if (typeof d !== "object" || d === null || Array.isArray(d) || ("context" in d) !== context) this.fail("chars tables must be objects, with a context except base");
    const t = d as Doc;
    const { symbols, counts } = t;
    const ok =
      Array.isArray(symbols) &&
      Array.isArray(counts) &&
      symbols.length > 0 &&
      symbols.length === counts.length &&
      symbols.length <= BYTES &&
      symbols.every((x, i) => Number.isInteger(x) && x >= 0 && x <= END && (i === 0 || x > symbols[i - 1])) &&
      counts.every((c) => Number.isInteger(c) && c > 0 && c <= MAX_TOTAL);
    if (!ok) this.fail("a chars table needs 1..257 increasing symbols 0..256 with counts");
    this.spend(symbols.length);
    const table = new CharTable(this.integer({ ...t, kind: "chars table" }, "esc", 1, MAX_TOTAL), symbols as number[], counts as number[]);
    if (table.total > MAX_TOTAL) this.fail("chars table total too large");
    return [context ? this.integer({ ...t, kind: "chars table" }, "context", 0, END) : -1, table];
  }

  node(raw: unknown, depth: number, position: number | null = null): Node {
    if (++this.nodes > MAX_NODES || depth > MAX_DEPTH) this.fail(`more than ${MAX_NODES} nodes or deeper than ${MAX_DEPTH}`);
    if (typeof raw !== "object" || raw === null || Array.isArray(raw) || typeof (raw as Doc).kind !== "string") this.fail("a node is not an object with a kind");
    const d = raw as Doc;
    const sub = depth + 1;
    switch (d.kind) {
      case "raw":
        return new Raw();
      case "categorical": {
        const { values, counts } = d;
        if (!Array.isArray(values) || !Array.isArray(counts) || values.length !== counts.length) this.fail("categorical values and counts must be lists of one length");
        if (!(values.length > 0 && values.length <= MAX_TABLE) || !counts.every((c) => Number.isInteger(c) && c > 0 && c <= MAX_TOTAL)) {
          this.fail(`categorical needs 1..${MAX_TABLE} values with counts in 1..${MAX_TOTAL}`);
        }
        this.spend(values.length);
        // (Repeated values are not looked for: JavaScript cannot tell 1 from 1.0, which a
        // model may hold as two values; decoding finds entries by slot, not by value.)
        const node = new Categorical(values, counts as number[], this.integer(d, "esc", 1, MAX_TOTAL), this.node(d.fallback, sub));
        if (node.total > MAX_TOTAL) this.fail("categorical total too large");
        node.sure = this.sure(d);
        return node;
      }
      case "int_range": {
        const lo = d.lo;
        if (!isInt(lo) || BigInt(lo) > MAX_SPAN || BigInt(lo) < -MAX_SPAN) this.fail("int_range.lo must be an integer within ±2^64");
        const span = d.span;
        if (!isInt(span) || BigInt(span) < 1n || BigInt(span) > MAX_SPAN) this.fail("int_range.span must be an integer in 1..2^64");
        return new IntRange(lo, span, ...this.counts(d));
      }
      case "magnitude": {
        this.since(3, "magnitude");
        const buckets = this.node(d.buckets, sub);
        if (!(buckets instanceof Categorical && buckets.fallback instanceof Raw && buckets.values.every((b) => typeof b === "number" && Number.isInteger(b) && Math.abs(b) <= MAX_BITS))) {
          this.fail(`magnitude buckets must be a categorical of integers within ±${MAX_BITS} escaping to JSON text`);
        }
        return new Magnitude(buckets, ...this.counts(d));
      }
      case "shape": {
        this.since(3, "shape");
        const { literals, kinds, children } = d;
        if (!Array.isArray(literals) || literals.length < 3 || literals.length > MAX_FIELDS + 1 || !literals.every((l) => typeof l === "string" && l.length <= 4096 && !/[A-Za-z0-9]/.test(l))) {
          this.fail(`shape.literals must be 3..${MAX_FIELDS + 1} strings without letters or digits`);
        }
        if (typeof kinds !== "string" || kinds.length !== literals.length - 1 || /[^a9]/.test(kinds) || [...kinds].some((k, i) => i > 0 && k === kinds[i - 1] && !literals[i])) {
          this.fail("shape.kinds must give each field a or 9, unlike a neighbour with no literal");
        }
        if (!Array.isArray(children) || children.length !== kinds.length) this.fail("shape.children must be one node per field");
        return new Shape(literals as string[], kinds, children.map((c) => this.node(c, sub)), ...this.counts(d));
      }
      case "decimal":
        return new Decimal(this.integer(d, "scale", 0, 6), this.node(d.inner, sub), ...this.counts(d));
      case "template":
        return new Template(this.text(d, "prefix"), this.integer(d, "width", this.version >= 3 ? 0 : 1, MAX_DIGITS), this.node(d.inner, sub), ...this.counts(d));
      case "chars": {
        if (this.version < 7) this.fail("chars appears from format 7 on");
        const tables = d.tables;
        if (!Array.isArray(tables) || tables.length > BYTES) this.fail("chars.tables must be a list of at most 257 tables");
        const by = new Map(tables.map((t) => this.charTable(t, true)));
        if (by.size !== tables.length) this.fail("chars tables repeat a context");
        return new Chars(by, this.charTable(d.base, false)[1], ...this.counts(d));
      }
      case "words": {
        const words = d.words;
        if (!Array.isArray(words) || words.length === 0 || words.length > MAX_POSITIONS) this.fail(`words needs 1..${MAX_POSITIONS} vocabularies`);
        const tokens = d.tokens;
        if (typeof tokens !== "boolean") this.fail("words.tokens must be a boolean");
        const vocab = words.map((w) => this.node(w, sub));
        const ok = vocab.every(
          (w) =>
            w instanceof Categorical &&
            (w.fallback instanceof Raw || (w.fallback instanceof Chars && this.version >= 7)) &&
            w.values.every((v) => typeof v === "string" && v && (tokens || !v.includes(" "))),
        );
        if (!ok) this.fail("a words vocabulary must be a categorical of words escaping to JSON text or chars");
        const [esc, hits] = this.counts(d);
        return new Words(this.node(d.count, sub), vocab as Categorical[], esc, hits, tokens);
      }
      case "object": {
        const { keys, children } = d;
        if (!Array.isArray(keys) || !Array.isArray(children) || keys.length !== children.length) this.fail("object keys and children must be lists of one length");
        if (!keys.every((k) => typeof k === "string") || new Set(keys).size !== keys.length || keys.length > MAX_TABLE) this.fail("object keys must be distinct strings");
        this.spend(keys.length);
        const kids = children.map((c, j) => this.node(c, sub, j));
        if ("other" in d) this.since(4, "object.other");
        const other = "other" in d ? this.node(d.other, sub) : null;
        // Format 8: an object chained to the next key order's stays on the common path.
        return new ObjectNode(keys as string[], kids, ...this.counts(d), other, this.version >= 8 && other instanceof ObjectNode);
      }
      case "map":
        this.since(4, "map");
        return new MapNode(this.node(d.count, sub), this.node(d.key, sub), this.node(d.value, sub), ...this.counts(d));
      case "given":
      case "affix":
      case "sum":
      case "prefixed": {
        if (position === null) this.fail(`${d.kind} appears outside an object`);
        const source = this.integer(d, "source", 0, Math.max(position - 1, 0));
        if (position === 0) this.fail(`${d.kind} is an object's first field and has no earlier field to read`);
        const other = this.node(d.other, sub);
        const [esc, hits] = this.counts(d);
        let rule: Rule;
        if (d.kind === "given") {
          rule = new Given(source, new Map(this.pairs(d)), other, esc, hits);
        } else if (d.kind === "affix") {
          if (typeof d.quoted !== "boolean") this.fail("affix.quoted must be a boolean");
          const numeric = d.numeric ?? false;
          if (typeof numeric !== "boolean" || (numeric && this.version < 3)) this.fail("affix.numeric must be a boolean, and appears from format 3 on");
          const affix = new Affix(source, this.text(d, "prefix"), this.text(d, "suffix"), d.quoted, other, esc, hits);
          affix.numeric = numeric;
          rule = affix;
        } else if (d.kind === "sum") {
          rule = new SumOf(source, this.text(d, "a"), this.text(d, "b"), this.integer(d, "scale", 0, 6), other, esc, hits);
        } else {
          const table = this.pairs(d);
          if (!table.every(([, p]) => typeof p === "string")) this.fail("prefixed.table must map to strings");
          rule = new Prefixed(source, new Map(table as [string, string][]), this.node(d.rest, sub), other, esc, hits);
        }
        rule.sure = this.sure(d);
        rule.legacy = this.version < 2;
        return rule;
      }
      case "array":
        return new ArrayNode(this.node(d.lengths, sub), this.node(d.item, sub), ...this.counts(d));
      default:
        return this.fail(`unknown node kind ${JSON.stringify(d.kind)}`);
    }
  }
}

/** Array and words nodes nested one inside another, at the deepest. */
function holdsFloat(v: unknown): boolean {
  if (v instanceof PyFloat) return true;
  if (typeof v !== "object" || v === null) return false;
  return Object.values(v).some(holdsFloat);
}

function loops(node: Node): number {
  const kids: Node[] = [];
  const add = (n: Node | null | undefined) => n && kids.push(n);
  if (node instanceof Categorical) add(node.fallback);
  if (node instanceof Escaping) add(node.other);
  if (node instanceof Magnitude) add(node.buckets);
  if (node instanceof Decimal || node instanceof Template) add(node.inner);
  if (node instanceof Shape || node instanceof ObjectNode) kids.push(...node.children);
  if (node instanceof Words) kids.push(node.count, ...node.words);
  if (node instanceof MapNode) kids.push(node.count, node.key, node.value);
  if (node instanceof ArrayNode) kids.push(node.lengths, node.item);
  if (node instanceof Prefixed) add(node.rest);
  const below = Math.max(0, ...kids.map(loops));
  return below + (node instanceof ArrayNode || node instanceof Words ? 1 : 0);
}

/** A learned model, read from a dictionary's model section (its JSON document, decompressed). */
export class Model {
  readonly format: number;
  private readonly root: Node;
  private readonly common: number;
  private readonly samples: number;
  /** Whether a PyFloat is anywhere in the model's document (its tables may hand one over). */
  private readonly floats: boolean;
  /** The decoder of formats 6-8, opened for each payload (decoding never nests). */
  private readonly range = new RangeDecoder();

  constructor(document: Uint8Array) {
    let doc: unknown;
    try {
      doc = parseJSONTyped(document);
    } catch (e) {
      throw new InvalidDictionary(`learned model section is not JSON: ${(e as Error).message}`);
    }
    if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw new InvalidDictionary("learned model section is not an object");
    const d = doc as Doc;
    if (![1, 2, 3, 4, 5, 6, 7, 8].includes(d.format as number)) throw new InvalidDictionary(`learned model format ${String(d.format)} is not supported`);
    this.format = d.format as number;
    const { samples, common } = d;
    if (!Number.isInteger(samples) || !Number.isInteger(common) || !(0 <= (common as number) && (common as number) <= (samples as number) && (samples as number) <= MAX_TOTAL - 2)) {
      throw new InvalidDictionary("learned model: common/samples must be integers 0 <= common <= samples");
    }
    this.samples = samples as number;
    this.common = common as number;
    this.root = new Reader(this.format).node(d.root, 0);
    this.floats = holdsFloat(d.root);
    if (loops(this.root) > MAX_LOOPS) throw new InvalidDictionary(`learned model nests more than ${MAX_LOOPS} arrays and words`);
  }

  /**
   * A payload's value: the flag, then the common path or the general rules, then the checks;
   * with `checksum`, the CRC-32 of Python's text of the value must be it.
   */
  decode(payload: Uint8Array, engine: SideEngine | null, maxSize: number, checksum: number | null = null): unknown {
    return this.decodeAt(payload, 0, engine, maxSize, checksum);
  }

  /** `decode` of the payload that is `data` from `start` on (a frame's, past its tag). */
  decodeAt(data: Uint8Array, start: number, engine: SideEngine | null, maxSize: number, checksum: number | null = null): unknown {
    const made = PyFloat.made;
    const value = this.decodeTyped(data, engine, maxSize, checksum, start);
    // A value with no PyFloat in it is handed over as it is: none made, and no table holds one.
    return this.floats || PyFloat.made !== made ? unwrapFloats(value) : value;
  }

  /** `decode`'s value before its integral floats become numbers (PyFloat objects). */
  decodeTyped(payload: Uint8Array, engine: SideEngine | null, maxSize: number, checksum: number | null = null, start = 0): unknown {
    const value = this.walk(payload, engine, maxSize, start);
    if (checksum !== null && crc32(pythonText(value)) !== checksum) {
      throw new ChecksumMismatch("frame checksum does not match its decoded content");
    }
    return value;
  }

  private walk(data: Uint8Array, engine: SideEngine | null, maxSize: number, start = 0): unknown {
    try {
      const exact = this.format < 6 ? new ExactDecoder(data.subarray(start), engine, maxSize, this.format === 5) : null;
      const d: RangeDecoder | ExactDecoder = exact ?? this.range.open(data, engine, maxSize, start);
      const total = this.samples + 2;
      let value: unknown;
      if (d.peek(total) <= this.common) {
        if (exact !== null) {
          // Formats 1-5 write the common path only without a side stream, in one block.
          if (exact.side) throw new DecodeError("learned-model payload says common path but has a side stream");
          exact.common = true;
        }
        d.take(0, this.common + 1, total);
        value = this.root.decodeCommon(d);
        if (exact !== null) exact.common = false;
      } else {
        d.take(this.common + 1, this.samples - this.common + 1, total);
        value = this.root.decode(d);
      }
      d.finish();
      return value;
    } catch (e) {
      if (e instanceof ZerocError) throw e;
      if (e instanceof RangeError) throw new DecodeError(`learned-model payload does not decode: ${e.message}`);
      throw e;
    }
  }
}
