// Raw DEFLATE (RFC 1951) for frame method 3. The platform's DecompressionStream('deflate-raw')
// takes no preset dictionary, and fflate's inflate ignores bytes after the final block, which
// spec/WIRE_FORMAT.md §1.4 requires rejecting; this decoder knows where the stream ends, fails
// with TruncatedFrame where data runs out and stops at the decoded-size limit. Codes are
// decoded canonically, a bit at a time (as zlib's puff does): method 3 is chosen for tiny
// messages, where building lookup tables would cost more than it saves.

import { DecodeError, LimitExceeded, TruncatedFrame } from "./errors.js";

const MAX_BITS = 15;
const LEN_BASE = Uint16Array.from([3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]);
const LEN_EXTRA = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]);
const DIST_BASE = Uint16Array.from([
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193,
  12289, 16385, 24577,
]);
const DIST_EXTRA = Uint8Array.from([0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]);
const CL_ORDER = Uint8Array.from([16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]);

/** A canonical code: how many codes of each length, and the symbols in code order. */
interface Code {
  count: Uint16Array;
  symbol: Uint16Array;
}

function buildCode(lengths: Uint8Array, n: number): Code {
  const count = new Uint16Array(MAX_BITS + 1);
  for (let s = 0; s < n; s++) count[lengths[s]]++;
  let left = 1;
  let max = 0;
  for (let len = 1; len <= MAX_BITS; len++) {
    left = left * 2 - count[len];
    if (left < 0) throw new DecodeError("deflate code lengths are over-subscribed");
    if (count[len]) max = len;
  }
  if (left > 0 && max !== 1 && count[0] !== n) throw new DecodeError("deflate code lengths are incomplete");
  const offs = new Uint16Array(MAX_BITS + 2);
  for (let len = 1; len <= MAX_BITS; len++) offs[len + 1] = offs[len] + count[len];
  const symbol = new Uint16Array(n);
  for (let s = 0; s < n; s++) if (lengths[s]) symbol[offs[lengths[s]]++] = s;
  return { count, symbol };
}

const FIXED_LIT = (() => {
  const l = new Uint8Array(288);
  l.fill(8, 0, 144);
  l.fill(9, 144, 256);
  l.fill(7, 256, 280);
  l.fill(8, 280, 288);
  return buildCode(l, 288);
})();
const FIXED_DIST = buildCode(new Uint8Array(32).fill(5), 32); // 30 and 31 complete the code; never valid in data

class Inflater {
  private pos = 0;
  private buf = 0;
  private cnt = 0;
  out: Uint8Array;
  size: number;
  private readonly start: number;

  constructor(
    private readonly d: Uint8Array,
    prefix: Uint8Array,
    private readonly limit: number,
  ) {
    this.out = new Uint8Array(prefix.length + Math.min(limit, Math.max(1024, d.length * 4)));
    this.out.set(prefix);
    this.start = this.size = prefix.length;
  }

  bits(n: number): number {
    let b = this.buf;
    while (this.cnt < n) {
      if (this.pos >= this.d.length) throw new TruncatedFrame("deflate payload ends before its final block");
      b |= this.d[this.pos++] << this.cnt;
      this.cnt += 8;
    }
    this.buf = b >>> n;
    this.cnt -= n;
    return b & ((1 << n) - 1);
  }

  decode(c: Code): number {
    let code = 0;
    let first = 0;
    let index = 0;
    for (let len = 1; len <= MAX_BITS; len++) {
      code |= this.bits(1);
      const count = c.count[len];
      if (code - count < first) return c.symbol[index + (code - first)];
      index += count;
      first = (first + count) << 1;
      code <<= 1;
    }
    throw new DecodeError("invalid deflate code");
  }

  private room(n: number): void {
    const need = this.size + n;
    if (need - this.start > this.limit) throw new LimitExceeded(`decoded size exceeds the limit of ${this.limit} bytes`);
    if (need > this.out.length) {
      const grown = new Uint8Array(Math.max(need, this.out.length * 2));
      grown.set(this.out.subarray(0, this.size));
      this.out = grown;
    }
  }

  run(): Uint8Array {
    let last = 0;
    while (!last) {
      last = this.bits(1);
      const type = this.bits(2);
      if (type === 0) this.stored();
      else if (type === 1) this.codes(FIXED_LIT, FIXED_DIST);
      else if (type === 2) this.dynamic();
      else throw new DecodeError("deflate block type 3 is reserved");
    }
    if (this.pos !== this.d.length) throw new DecodeError(`${this.d.length - this.pos} bytes after the deflate stream`);
    return this.out.slice(this.start, this.size);
  }

  private stored(): void {
    this.buf = 0;
    this.cnt = 0;
    const d = this.d;
    if (this.pos + 4 > d.length) throw new TruncatedFrame("deflate payload ends inside a stored block header");
    const len = d[this.pos] | (d[this.pos + 1] << 8);
    const nlen = d[this.pos + 2] | (d[this.pos + 3] << 8);
    this.pos += 4;
    if (len !== (~nlen & 0xffff)) throw new DecodeError("deflate stored block length does not match its complement");
    if (this.pos + len > d.length) throw new TruncatedFrame("deflate payload ends inside a stored block");
    this.room(len);
    this.out.set(d.subarray(this.pos, this.pos + len), this.size);
    this.size += len;
    this.pos += len;
  }

  private dynamic(): void {
    const nlen = this.bits(5) + 257;
    const ndist = this.bits(5) + 1;
    const ncode = this.bits(4) + 4;
    if (nlen > 286 || ndist > 30) throw new DecodeError("too many deflate length or distance symbols");
    const lengths = new Uint8Array(320);
    for (let i = 0; i < ncode; i++) lengths[CL_ORDER[i]] = this.bits(3);
    const lencode = buildCode(lengths, 19);
    lengths.fill(0);
    let i = 0;
    while (i < nlen + ndist) {
      const sym = this.decode(lencode);
      if (sym < 16) {
        lengths[i++] = sym;
        continue;
      }
      let len = 0;
      let rep: number;
      if (sym === 16) {
        if (i === 0) throw new DecodeError("deflate repeats a code length before the first");
        len = lengths[i - 1];
        rep = 3 + this.bits(2);
      } else if (sym === 17) {
        rep = 3 + this.bits(3);
      } else {
        rep = 11 + this.bits(7);
      }
      if (i + rep > nlen + ndist) throw new DecodeError("deflate code lengths overrun their count");
      lengths.fill(len, i, i + rep);
      i += rep;
    }
    if (lengths[256] === 0) throw new DecodeError("deflate code has no end-of-block symbol");
    const lit = buildCode(lengths.subarray(0, nlen), nlen);
    const dist = buildCode(lengths.subarray(nlen, nlen + ndist), ndist);
    this.codes(lit, dist);
  }

  private codes(lit: Code, dist: Code): void {
    for (;;) {
      const sym = this.decode(lit);
      if (sym < 256) {
        this.room(1);
        this.out[this.size++] = sym;
        continue;
      }
      if (sym === 256) return;
      const l = sym - 257;
      if (l >= 29) throw new DecodeError("invalid deflate length symbol");
      const len = LEN_BASE[l] + this.bits(LEN_EXTRA[l]);
      const ds = this.decode(dist);
      if (ds >= 30) throw new DecodeError("invalid deflate distance symbol");
      const back = DIST_BASE[ds] + this.bits(DIST_EXTRA[ds]);
      if (back > this.size) throw new DecodeError("deflate distance reaches before the start of the history");
      this.room(len);
      const out = this.out;
      let src = this.size - back;
      let o = this.size;
      for (let k = 0; k < len; k++) out[o++] = out[src++];
      this.size = o;
    }
  }
}

/** Inflate a raw DEFLATE stream that fills `data` exactly, with `dictionary` as its history. */
export function inflateRaw(data: Uint8Array, dictionary: Uint8Array | null, maxSize: number): Uint8Array {
  return new Inflater(data, dictionary ?? new Uint8Array(0), maxSize).run();
}
