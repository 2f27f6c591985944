// A Zstandard decoder (RFC 8878) for the frames, blocks and session records of
// spec/WIRE_FORMAT.md. None of the npm registry's decoders loads a dictionary once and reuses it
// (fzstd has no dictionaries; @bokuweb/zstd-wasm reparses one on every call), continues one frame
// across session records, or stops at a decoded-size limit with a typed error; this one does all
// three in plain JavaScript, so it runs from a <script type="module"> with nothing to fetch.
//
// Every read is bounds-checked: corrupt input raises DecodeError (TruncatedFrame where data
// ends early, LimitExceeded past a limit) and never reads or writes outside its buffers.

import { DecodeError, LimitExceeded, TruncatedFrame } from "./errors.js";

export const BLOCK_MAX = 128 * 1024;
// Decoded literals of the block being decoded: blocks are decoded whole and synchronously, so
// one buffer serves every frame and session.
const LITERALS = new Uint8Array(BLOCK_MAX);
const DICT_MAGIC = 0xec30a437;
const DEFAULT_REPS = [1, 4, 8];

// --- bit readers ---------------------------------------------------------------------------

function highBit(v: number): number {
  return 31 - Math.clz32(v);
}

/** Reads a zstd backward bitstream (RFC 8878 §4.1): bits come from the end towards the start. */
class BackwardBits {
  private readonly d: Uint8Array;
  private readonly start: number;
  /** Bits not yet read: positions [0, bits) relative to `start`, read from the top. */
  bits: number;

  constructor(d: Uint8Array, start: number, end: number) {
    if (end <= start) throw new DecodeError("empty bitstream");
    const last = d[end - 1];
    if (last === 0) throw new DecodeError("bitstream without its end marker");
    this.d = d;
    this.start = start;
    this.bits = (end - 1 - start) * 8 + highBit(last);
  }

  /** `n` (0..24) bits ending at bit position `p` (exclusive), zeros below the stream's start. */
  private take(p: number, n: number): number {
    if (n === 0) return 0;
    let lo = p - n;
    let pad = 0;
    if (lo < 0) {
      pad = -lo;
      lo = 0;
      n -= pad;
      if (n <= 0) return 0;
    }
    const d = this.d;
    const i = this.start + (lo >> 3);
    const w = d[i] | (d[i + 1] << 8) | (d[i + 2] << 16) | (d[i + 3] << 24);
    return (((w >>> (lo & 7)) & ((1 << n) - 1)) << pad) >>> 0;
  }

  /** Read `n` bits (0..31); reading past the start yields zeros and leaves `bits` negative. */
  read(n: number): number {
    if (n > 24) {
      const hi = this.read(n - 16);
      return hi * 65536 + this.read(16);
    }
    const v = this.take(this.bits, n);
    this.bits -= n;
    return v;
  }

  peek(n: number): number {
    return this.take(this.bits, n);
  }
}

// --- FSE ----------------------------------------------------------------------------------

/** A decoding table: symbol, bits to read and baseline of the next state, per state. */
interface FseTable {
  log: number;
  symbol: Uint8Array;
  nbBits: Uint8Array;
  base: Uint16Array;
}

function buildFse(norm: Int16Array, count: number, log: number): FseTable {
  const size = 1 << log;
  const symbol = new Uint8Array(size);
  const nbBits = new Uint8Array(size);
  const base = new Uint16Array(size);
  const next = new Uint16Array(count);
  let high = size - 1;
  for (let s = 0; s < count; s++) {
    if (norm[s] === -1) {
      symbol[high--] = s;
      next[s] = 1;
    } else {
      next[s] = norm[s];
    }
  }
  const step = (size >> 1) + (size >> 3) + 3;
  const mask = size - 1;
  let pos = 0;
  for (let s = 0; s < count; s++) {
    for (let i = 0; i < norm[s]; i++) {
      symbol[pos] = s;
      do pos = (pos + step) & mask;
      while (pos > high);
    }
  }
  if (pos !== 0) throw new DecodeError("FSE table does not spread evenly");
  for (let u = 0; u < size; u++) {
    const s = symbol[u];
    const n = next[s]++;
    const bits = log - highBit(n);
    nbBits[u] = bits;
    base[u] = (n << bits) - size;
  }
  return { log, symbol, nbBits, base };
}

/** Read an FSE table description (RFC 8878 §4.1.1) at `pos`; returns the table and the end. */
function readFse(d: Uint8Array, pos: number, end: number, maxSymbol: number, maxLog: number): [FseTable, number] {
  let bitPos = pos * 8;
  const limit = end * 8;
  const bits = (n: number): number => {
    const i = bitPos >> 3;
    const w = d[i] | (d[i + 1] << 8) | (d[i + 2] << 16) | (d[i + 3] << 24);
    return (w >>> (bitPos & 7)) & ((1 << n) - 1);
  };
  if (pos >= end) throw new TruncatedFrame("data ends inside an FSE table description");
  const log = bits(4) + 5;
  bitPos += 4;
  if (log > maxLog) throw new DecodeError(`FSE accuracy log ${log} exceeds ${maxLog}`);
  const norm = new Int16Array(maxSymbol + 1);
  let remaining = (1 << log) + 1;
  let threshold = 1 << log;
  let nb = log + 1;
  let s = 0;
  let previousZero = false;
  while (remaining > 1 && s <= maxSymbol) {
    if (previousZero) {
      let repeat = 3;
      while (repeat === 3) {
        repeat = bits(2);
        bitPos += 2;
        s += repeat;
        if (bitPos > limit) throw new TruncatedFrame("data ends inside an FSE table description");
      }
      if (s > maxSymbol) throw new DecodeError("FSE table has too many symbols");
    }
    const max = 2 * threshold - 1 - remaining;
    let count: number;
    const low = bits(nb - 1);
    if (low < max) {
      count = low;
      bitPos += nb - 1;
    } else {
      count = bits(nb);
      if (count >= threshold) count -= max;
      bitPos += nb;
    }
    if (bitPos > limit) throw new TruncatedFrame("data ends inside an FSE table description");
    count -= 1;
    remaining -= count < 0 ? -count : count;
    norm[s++] = count;
    previousZero = count === 0;
    while (remaining < threshold) {
      nb--;
      threshold >>= 1;
    }
  }
  if (remaining !== 1) throw new DecodeError("FSE probabilities do not add up");
  return [buildFse(norm, s, log), (bitPos + 7) >> 3];
}

function rleFse(symbol: number): FseTable {
  return { log: 0, symbol: Uint8Array.of(symbol), nbBits: new Uint8Array(1), base: new Uint16Array(1) };
}

// Predefined distributions (RFC 8878 §3.1.1.3.2.2).
const LL_DEFAULT = buildFse(
  Int16Array.from([4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1]),
  36,
  6,
);
const ML_DEFAULT = buildFse(
  Int16Array.from([
    1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1,
  ]),
  53,
  6,
);
const OF_DEFAULT = buildFse(
  Int16Array.from([1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1]),
  29,
  5,
);

const LL_BASE = Uint32Array.from([
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048,
  4096, 8192, 16384, 32768, 65536,
]);
const LL_BITS = Uint8Array.from([
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
]);
const ML_BASE = Uint32Array.from([
  3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
  35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051, 4099, 8195, 16387, 32771, 65539,
]);
const ML_BITS = Uint8Array.from([
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3,
  4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
]);

// --- Huffman ------------------------------------------------------------------------------

/** A literals decoding table: indexed by the next `log` bits, the symbol and its length. */
interface HuffTable {
  log: number;
  symbol: Uint8Array;
  nbBits: Uint8Array;
}

/** Read a Huffman tree description (RFC 8878 §4.2.1) at `pos`; returns the table and the end. */
function readHuffman(d: Uint8Array, pos: number, end: number): [HuffTable, number] {
  if (pos >= end) throw new TruncatedFrame("data ends inside a Huffman tree description");
  const head = d[pos++];
  const weights = new Uint8Array(256);
  let n = 0;
  if (head < 128) {
    const stop = pos + head;
    if (head === 0 || stop > end) throw new TruncatedFrame("data ends inside Huffman weights");
    const [table, start] = readFse(d, pos, stop, 255, 6);
    const bits = new BackwardBits(d, start, stop);
    let s1 = bits.read(table.log);
    let s2 = bits.read(table.log);
    for (;;) {
      if (n > 254) throw new DecodeError("too many Huffman weights");
      weights[n++] = table.symbol[s1];
      s1 = table.base[s1] + bits.read(table.nbBits[s1]);
      if (bits.bits < 0) {
        weights[n++] = table.symbol[s2];
        break;
      }
      if (n > 254) throw new DecodeError("too many Huffman weights");
      weights[n++] = table.symbol[s2];
      s2 = table.base[s2] + bits.read(table.nbBits[s2]);
      if (bits.bits < 0) {
        weights[n++] = table.symbol[s1];
        break;
      }
    }
    pos = stop;
  } else {
    n = head - 127;
    const stop = pos + ((n + 1) >> 1);
    if (stop > end) throw new TruncatedFrame("data ends inside Huffman weights");
    for (let i = 0; i < n; i++) weights[i] = i & 1 ? d[pos + (i >> 1)] & 15 : d[pos + (i >> 1)] >> 4;
    pos = stop;
  }
  let sum = 0;
  for (let i = 0; i < n; i++) {
    if (weights[i] > 11) throw new DecodeError("Huffman weight above 11");
    if (weights[i]) sum += 1 << (weights[i] - 1);
  }
  if (sum === 0) throw new DecodeError("Huffman weights are all zero");
  const log = highBit(sum) + 1;
  if (log > 11) throw new DecodeError("Huffman code longer than 11 bits");
  const rest = (1 << log) - sum;
  if (rest & (rest - 1)) throw new DecodeError("Huffman weights do not complete a tree");
  weights[n++] = highBit(rest) + 1;
  const size = 1 << log;
  const symbol = new Uint8Array(size);
  const nbBits = new Uint8Array(size);
  let at = 0;
  for (let w = 1; w <= log; w++) {
    const span = 1 << (w - 1);
    for (let s = 0; s < n; s++) {
      if (weights[s] !== w) continue;
      symbol.fill(s, at, at + span);
      nbBits.fill(log + 1 - w, at, at + span);
      at += span;
    }
  }
  return [{ log, symbol, nbBits }, pos];
}

function huffmanStream(t: HuffTable, d: Uint8Array, start: number, end: number, out: Uint8Array, o: number, count: number): void {
  const bits = new BackwardBits(d, start, end);
  const { log, symbol, nbBits } = t;
  for (let i = 0; i < count; i++) {
    const k = bits.peek(log);
    out[o + i] = symbol[k];
    bits.bits -= nbBits[k];
  }
  if (bits.bits !== 0) throw new DecodeError("Huffman stream does not end where its literals do");
}

/** Copy `n` bytes: a loop for the short copies sequences mostly make, set() for long ones. */
function copy(out: Uint8Array, o: number, src: Uint8Array, from: number, n: number): void {
  if (n > 32) {
    out.set(src.subarray(from, from + n), o);
    return;
  }
  for (let i = 0; i < n; i++) out[o + i] = src[from + i];
}

// --- dictionaries -------------------------------------------------------------------------

/** A zstd dictionary, parsed once: its entropy tables, repeat offsets and content. */
export class ZstdDictionary {
  readonly content: Uint8Array;
  readonly id: number;
  readonly huffman: HuffTable | null = null;
  readonly ll: FseTable | null = null;
  readonly of: FseTable | null = null;
  readonly ml: FseTable | null = null;
  readonly reps: [number, number, number] = [1, 4, 8];

  /** `bytes`: a trained dictionary (its magic first) or raw content. */
  constructor(bytes: Uint8Array) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (bytes.length < 8 || view.getUint32(0, true) !== DICT_MAGIC) {
      this.content = bytes;
      this.id = 0;
      return;
    }
    this.id = view.getUint32(4, true);
    const end = bytes.length;
    let pos = 8;
    [this.huffman, pos] = readHuffman(bytes, pos, end);
    [this.of, pos] = readFse(bytes, pos, end, 31, 8);
    [this.ml, pos] = readFse(bytes, pos, end, 52, 9);
    [this.ll, pos] = readFse(bytes, pos, end, 35, 9);
    if (pos + 12 > end) throw new TruncatedFrame("dictionary ends inside its repeat offsets");
    this.reps = [view.getUint32(pos, true), view.getUint32(pos + 4, true), view.getUint32(pos + 8, true)];
    this.content = bytes.subarray(pos + 12);
    for (const r of this.reps) {
      if (r === 0 || r > this.content.length) throw new DecodeError("dictionary repeat offset out of range");
    }
  }
}

// --- frames -------------------------------------------------------------------------------

export interface FrameHeader {
  windowSize: number;
  /** The declared content size, or -1. */
  contentSize: number;
  dictionaryId: number;
  checksum: boolean;
  /** Where the first block starts. */
  end: number;
}

/** Parse a magicless frame header at `pos` (RFC 8878 §3.1.1.1). */
export function readFrameHeader(d: Uint8Array, pos: number): FrameHeader {
  if (pos >= d.length) throw new TruncatedFrame("data ends inside a zstd frame header");
  const fhd = d[pos];
  if (fhd & 0x08) throw new DecodeError("zstd frame header sets its reserved bit");
  const fcsFlag = fhd >> 6;
  const single = (fhd >> 5) & 1;
  const didSize = [0, 1, 2, 4][fhd & 3];
  const fcsSize = [single, 2, 4, 8][fcsFlag];
  const end = pos + 1 + (single ? 0 : 1) + didSize + fcsSize;
  if (end > d.length) throw new TruncatedFrame("data ends inside a zstd frame header");
  let p = pos + 1;
  let windowSize = 0;
  if (!single) {
    const wd = d[p++];
    const log = 10 + (wd >> 3);
    windowSize = 2 ** log + (2 ** log / 8) * (wd & 7);
  }
  let dictionaryId = 0;
  for (let i = 0; i < didSize; i++) dictionaryId += d[p++] * 2 ** (8 * i);
  let contentSize = -1;
  if (fcsSize) {
    contentSize = 0;
    for (let i = 0; i < fcsSize; i++) contentSize += d[p++] * 2 ** (8 * i);
    if (fcsSize === 2) contentSize += 256;
  }
  if (single) windowSize = contentSize;
  return { windowSize, contentSize, dictionaryId, checksum: (fhd & 4) !== 0, end };
}

/**
 * The state of one frame being decoded: history (the dictionary, then everything decoded so
 * far within the window), repeat offsets and the tables a block may repeat. Blocks are decoded
 * into `out`; a session keeps one of these open across records.
 */
export class FrameDecoder {
  out: Uint8Array;
  /** Bytes of `out` in use. */
  size = 0;
  /** Where the frame's own content starts in `out` (bytes before it are kept history). */
  private mark = 0;
  private readonly dict: ZstdDictionary | null;
  private dictReachable: boolean;
  private readonly window: number;
  private reps: number[];
  private huffman: HuffTable | null;
  private ll: FseTable | null;
  private of: FseTable | null;
  private ml: FseTable | null;
  /** Whether the frame's last block has been decoded. */
  ended = false;
  /** Where the sequence table just read ends. */
  private cursor = 0;

  constructor(dict: ZstdDictionary | null, windowSize: number, capacity: number) {
    this.dict = dict;
    this.dictReachable = dict !== null;
    this.window = windowSize;
    this.out = new Uint8Array(capacity);
    this.reps = dict ? [...dict.reps] : [1, 4, 8];
    this.huffman = dict ? dict.huffman : null;
    this.ll = dict ? dict.ll : null;
    this.of = dict ? dict.of : null;
    this.ml = dict ? dict.ml : null;
  }

  /** Back to the state of a new frame, keeping the output buffer. */
  reset(): void {
    const dict = this.dict;
    this.size = this.mark = 0;
    this.ended = false;
    this.dictReachable = dict !== null;
    const reps = dict ? dict.reps : DEFAULT_REPS;
    this.reps[0] = reps[0];
    this.reps[1] = reps[1];
    this.reps[2] = reps[2];
    this.huffman = dict ? dict.huffman : null;
    this.ll = dict ? dict.ll : null;
    this.of = dict ? dict.of : null;
    this.ml = dict ? dict.ml : null;
  }

  /** Start a new output for the next record; history before it stays, trimmed to the window. */
  begin(): void {
    if (this.size > this.window) {
      const keep = this.out.subarray(this.size - this.window, this.size);
      this.out.copyWithin(0, this.size - this.window, this.size);
      this.size = keep.length;
      this.dictReachable = false;
    }
    this.mark = this.size;
  }

  /** The bytes decoded since the last `begin`. */
  output(): Uint8Array {
    return this.out.subarray(this.mark, this.size);
  }

  private reserve(n: number, limit: number): void {
    const need = this.size + n;
    if (need - this.mark > limit) throw new LimitExceeded(`decoded size exceeds the limit of ${limit} bytes`);
    if (need <= this.out.length) return;
    const grown = new Uint8Array(Math.max(need, this.out.length * 2));
    grown.set(this.out.subarray(0, this.size));
    this.out = grown;
  }

  /**
   * Decode whole blocks, each with its header, from `d[pos..end)`; returns where they end.
   */
  blocks(d: Uint8Array, pos: number, end: number, limit: number): number {
    while (pos < end) {
      if (this.ended) throw new DecodeError("data after the zstd frame's last block");
      if (pos + 3 > end) throw new TruncatedFrame("data ends inside a zstd block header");
      const h = d[pos] | (d[pos + 1] << 8) | (d[pos + 2] << 16);
      pos += 3;
      const type = (h >> 1) & 3;
      const size = h >>> 3;
      if (type === 3) throw new DecodeError("zstd block type 3 is reserved");
      pos = this.block(d, pos, end, type, size, limit);
      if (h & 1) this.ended = true;
    }
    return pos;
  }

  /** Decode blocks from `pos` up to and including the frame's last one; returns where it ends. */
  blocksUntilLast(d: Uint8Array, pos: number, limit: number): number {
    while (!this.ended) {
      if (pos + 3 > d.length) throw new TruncatedFrame("data ends inside a zstd block header");
      const h = d[pos] | (d[pos + 1] << 8) | (d[pos + 2] << 16);
      pos += 3;
      const type = (h >> 1) & 3;
      if (type === 3) throw new DecodeError("zstd block type 3 is reserved");
      pos = this.block(d, pos, d.length, type, h >>> 3, limit);
      if (h & 1) this.ended = true;
    }
    return pos;
  }

  /** Decode one block of `type` whose content (or, for RLE, whose byte) starts at `pos`. */
  block(d: Uint8Array, pos: number, end: number, type: number, size: number, limit: number): number {
    if (size > BLOCK_MAX) throw new DecodeError(`zstd block of ${size} bytes exceeds the 128 KiB block limit`);
    if (type === 0) {
      if (pos + size > end) throw new TruncatedFrame("data ends inside a raw zstd block");
      this.reserve(size, limit);
      this.out.set(d.subarray(pos, pos + size), this.size);
      this.size += size;
      return pos + size;
    }
    if (type === 1) {
      if (pos >= end) throw new TruncatedFrame("data ends inside an RLE zstd block");
      this.reserve(size, limit);
      this.out.fill(d[pos], this.size, this.size + size);
      this.size += size;
      return pos + 1;
    }
    if (pos + size > end) throw new TruncatedFrame("data ends inside a compressed zstd block");
    this.compressed(d, pos, pos + size, limit);
    return pos + size;
  }

  private compressed(d: Uint8Array, pos: number, end: number, limit: number): void {
    // Literals section (RFC 8878 §3.1.1.3.1).
    const b0 = d[pos];
    const ltype = b0 & 3;
    const sf = (b0 >> 2) & 3;
    let regen: number;
    let lits: Uint8Array;
    if (ltype < 2) {
      let hs: number;
      if (sf === 0 || sf === 2) {
        regen = b0 >> 3;
        hs = 1;
      } else if (sf === 1) {
        regen = (b0 >> 4) + (d[pos + 1] << 4);
        hs = 2;
      } else {
        regen = (b0 >> 4) + (d[pos + 1] << 4) + (d[pos + 2] << 12);
        hs = 3;
      }
      if (pos + hs > end) throw new TruncatedFrame("data ends inside a literals header");
      if (regen > BLOCK_MAX) throw new DecodeError("literals exceed the block size");
      pos += hs;
      if (ltype === 0) {
        if (pos + regen > end) throw new TruncatedFrame("data ends inside raw literals");
        lits = d.subarray(pos, pos + regen);
        pos += regen;
      } else {
        if (pos >= end) throw new TruncatedFrame("data ends inside RLE literals");
        lits = LITERALS.subarray(0, regen);
        lits.fill(d[pos]);
        pos += 1;
      }
    } else {
      let hs: number;
      let csize: number;
      let streams = 4;
      if (sf < 2) {
        hs = 3;
        const v = b0 | (d[pos + 1] << 8) | (d[pos + 2] << 16);
        regen = (v >> 4) & 0x3ff;
        csize = (v >> 14) & 0x3ff;
        if (sf === 0) streams = 1;
      } else if (sf === 2) {
        hs = 4;
        const v = (b0 | (d[pos + 1] << 8) | (d[pos + 2] << 16) | (d[pos + 3] << 24)) >>> 0;
        regen = (v >>> 4) & 0x3fff;
        csize = (v >>> 18) & 0x3fff;
      } else {
        hs = 5;
        regen = ((b0 >> 4) | (d[pos + 1] << 4) | (d[pos + 2] << 12)) & 0x3ffff;
        csize = (d[pos + 2] >> 6) | (d[pos + 3] << 2) | (d[pos + 4] << 10);
      }
      if (pos + hs > end) throw new TruncatedFrame("data ends inside a literals header");
      if (regen > BLOCK_MAX) throw new DecodeError("literals exceed the block size");
      pos += hs;
      const stop = pos + csize;
      if (stop > end) throw new TruncatedFrame("data ends inside compressed literals");
      if (ltype === 2) {
        [this.huffman, pos] = readHuffman(d, pos, stop);
      } else if (this.huffman === null) {
        throw new DecodeError("treeless literals without an earlier Huffman table");
      }
      const table = this.huffman!;
      lits = LITERALS.subarray(0, regen);
      if (streams === 1) {
        huffmanStream(table, d, pos, stop, lits, 0, regen);
      } else {
        if (pos + 6 > stop) throw new TruncatedFrame("data ends inside a literals jump table");
        const s1 = d[pos] | (d[pos + 1] << 8);
        const s2 = d[pos + 2] | (d[pos + 3] << 8);
        const s3 = d[pos + 4] | (d[pos + 5] << 8);
        pos += 6;
        const each = (regen + 3) >> 2;
        if (3 * each > regen) throw new DecodeError("too few literals for four streams");
        const e1 = pos + s1;
        const e2 = e1 + s2;
        const e3 = e2 + s3;
        if (e3 > stop) throw new DecodeError("literals jump table points past its data");
        huffmanStream(table, d, pos, e1, lits, 0, each);
        huffmanStream(table, d, e1, e2, lits, each, each);
        huffmanStream(table, d, e2, e3, lits, 2 * each, each);
        huffmanStream(table, d, e3, stop, lits, 3 * each, regen - 3 * each);
      }
      pos = stop;
    }
    this.sequences(d, pos, end, lits, limit);
  }

  private sequences(d: Uint8Array, pos: number, end: number, lits: Uint8Array, limit: number): void {
    if (pos >= end) throw new TruncatedFrame("data ends before the sequences section");
    let count = d[pos++];
    if (count >= 128) {
      if (count < 255) {
        if (pos >= end) throw new TruncatedFrame("data ends inside the sequence count");
        count = ((count - 128) << 8) + d[pos++];
      } else {
        if (pos + 2 > end) throw new TruncatedFrame("data ends inside the sequence count");
        count = d[pos] + (d[pos + 1] << 8) + 0x7f00;
        pos += 2;
      }
    }
    const blockStart = this.size;
    if (count === 0) {
      if (pos !== end) throw new DecodeError("bytes after a block's literals and no sequences");
      this.reserve(lits.length, limit);
      this.out.set(lits, this.size);
      this.size += lits.length;
      return;
    }
    if (pos >= end) throw new TruncatedFrame("data ends before the sequence modes");
    const modes = d[pos++];
    if (modes & 3) throw new DecodeError("sequence modes set reserved bits");
    this.cursor = pos;
    this.ll = this.table(d, this.cursor, end, modes >> 6, this.ll, LL_DEFAULT, 35, 9);
    this.of = this.table(d, this.cursor, end, (modes >> 4) & 3, this.of, OF_DEFAULT, 31, 8);
    this.ml = this.table(d, this.cursor, end, (modes >> 2) & 3, this.ml, ML_DEFAULT, 52, 9);
    pos = this.cursor;
    const ll = this.ll!;
    const of = this.of!;
    const ml = this.ml!;
    const bits = new BackwardBits(d, pos, end);
    let sll = bits.read(ll.log);
    let sof = bits.read(of.log);
    let sml = bits.read(ml.log);
    const reps = this.reps;
    const dictContent = this.dict ? this.dict.content : null;
    let litPos = 0;
    for (let i = 0; i < count; i++) {
      const ofCode = of.symbol[sof];
      const mlCode = ml.symbol[sml];
      const llCode = ll.symbol[sll];
      if (ofCode > 31) throw new DecodeError("offset code above 31");
      // (1 << ofCode) >>> 0 is 2^ofCode for 1..31: 2 ** ofCode took a third of the decode time
      let offsetValue = ofCode > 0 ? ((1 << ofCode) >>> 0) + bits.read(ofCode) : 1;
      const matchLength = ML_BASE[mlCode] + (ML_BITS[mlCode] ? bits.read(ML_BITS[mlCode]) : 0);
      const litLength = LL_BASE[llCode] + (LL_BITS[llCode] ? bits.read(LL_BITS[llCode]) : 0);
      let offset: number;
      if (offsetValue > 3) {
        offset = offsetValue - 3;
        reps[2] = reps[1];
        reps[1] = reps[0];
        reps[0] = offset;
      } else {
        if (litLength === 0) offsetValue++;
        if (offsetValue === 1) {
          offset = reps[0];
        } else if (offsetValue === 2) {
          offset = reps[1];
          reps[1] = reps[0];
          reps[0] = offset;
        } else {
          offset = offsetValue === 3 ? reps[2] : reps[0] - 1;
          reps[2] = reps[1];
          reps[1] = reps[0];
          reps[0] = offset;
        }
        if (offset === 0) throw new DecodeError("repeat offset of 0");
      }
      if (i + 1 < count) {
        sll = ll.base[sll] + bits.read(ll.nbBits[sll]);
        sml = ml.base[sml] + bits.read(ml.nbBits[sml]);
        sof = of.base[sof] + bits.read(of.nbBits[sof]);
      }
      if (bits.bits < 0) throw new DecodeError("sequences read past the start of their bitstream");
      // Execute: literals, then the match.
      if (litPos + litLength > lits.length) throw new DecodeError("sequence takes more literals than the block has");
      if (this.size + litLength + matchLength - blockStart > BLOCK_MAX) {
        throw new DecodeError("block decodes past 128 KiB");
      }
      this.reserve(litLength + matchLength, limit);
      const out = this.out;
      if (litLength) {
        copy(out, this.size, lits, litPos, litLength);
        litPos += litLength;
        this.size += litLength;
      }
      let n = matchLength;
      if (offset > this.size) {
        const back = offset - this.size;
        if (!this.dictReachable || dictContent === null || back > dictContent.length) {
          throw new DecodeError(`match offset ${offset} reaches before the start of the history`);
        }
        const from = dictContent.length - back;
        const k = Math.min(n, back);
        copy(out, this.size, dictContent, from, k);
        this.size += k;
        n -= k;
      }
      const src = this.size - offset;
      if (n > 16) {
        // copyWithin of bytes written already: where the match overlaps its own output (offset <
        // n), they repeat every `offset` bytes from src, so each copy, a whole number of periods
        // long, doubles the run that the next can copy from src
        for (let done = 0; done < n; ) {
          const k = Math.min(offset + done, n - done);
          out.copyWithin(this.size + done, src, src + k);
          done += k;
        }
        this.size += n;
      } else {
        let o = this.size;
        for (let j = src; j < src + n; j++) out[o++] = out[j];
        this.size = o;
      }
    }
    if (bits.bits !== 0) throw new DecodeError("sequences do not end where their bitstream does");
    const rest = lits.length - litPos;
    if (this.size + rest - blockStart > BLOCK_MAX) throw new DecodeError("block decodes past 128 KiB");
    this.reserve(rest, limit);
    this.out.set(lits.subarray(litPos), this.size);
    this.size += rest;
  }

  private table(
    d: Uint8Array,
    pos: number,
    end: number,
    mode: number,
    previous: FseTable | null,
    predefined: FseTable,
    maxSymbol: number,
    maxLog: number,
  ): FseTable {
    if (mode === 0) return predefined;
    if (mode === 1) {
      if (pos >= end) throw new TruncatedFrame("data ends inside an RLE sequence table");
      if (d[pos] > maxSymbol) throw new DecodeError("RLE sequence symbol out of range");
      this.cursor = pos + 1;
      return rleFse(d[pos]);
    }
    if (mode === 2) {
      const [table, next] = readFse(d, pos, end, maxSymbol, maxLog);
      this.cursor = next;
      return table;
    }
    if (previous === null) throw new DecodeError("repeated sequence table without an earlier one");
    return previous;
  }
}

export interface ZstdLimits {
  /** Largest decoded size accepted (LimitExceeded past it). */
  maxSize: number;
  /** Largest zstd window accepted (LimitExceeded past it). */
  maxWindow: number;
}

/**
 * Decode one magicless zstd frame filling `d[pos..)` exactly: its dictionary id must be 0 and,
 * when `needSize`, it must declare its content size.
 */
export function decompressFrame(d: Uint8Array, dict: ZstdDictionary | null, limits: ZstdLimits, needSize: boolean): Uint8Array {
  const h = readFrameHeader(d, 0);
  if (h.dictionaryId !== 0) throw new DecodeError("zstd-frame payload carries a dictionary id");
  if (needSize && h.contentSize < 0) throw new DecodeError("zstd-frame payload does not declare its content size");
  if (h.contentSize > limits.maxSize) {
    throw new LimitExceeded(`frame declares ${h.contentSize} decoded bytes, over the limit of ${limits.maxSize}`);
  }
  if (h.windowSize > limits.maxWindow) {
    throw new LimitExceeded(`frame needs a ${h.windowSize}-byte window, over the limit of ${limits.maxWindow}`);
  }
  const capacity = h.contentSize >= 0 ? h.contentSize : Math.min(limits.maxSize, BLOCK_MAX);
  const f = new FrameDecoder(dict, Math.max(h.windowSize, 1), capacity);
  let pos = f.blocksUntilLast(d, h.end, limits.maxSize);
  if (h.checksum) {
    if (pos + 4 > d.length) throw new TruncatedFrame("data ends inside a zstd content checksum");
    pos += 4;
  }
  if (pos !== d.length) throw new DecodeError(`${d.length - pos} bytes after the zstd frame`);
  if (h.contentSize >= 0 && f.size !== h.contentSize) {
    throw new DecodeError(`zstd frame decodes to ${f.size} bytes, not the ${h.contentSize} it declares`);
  }
  return f.out.length === f.size ? f.out : f.out.slice(0, f.size);
}

// One block decoder per dictionary, its 128 KiB output reused by every zstd-block frame: a new
// decoder per frame cost more than decoding a small message. Decoding is synchronous, so no two
// frames ever share one at a time.
const BLOCK_DECODERS = new WeakMap<ZstdDictionary, FrameDecoder>();
let plainBlockDecoder: FrameDecoder | null = null;

/**
 * Decode the content of one compressed block, the whole of a zstd-block payload (method 1):
 * `data[start..)`, so that a frame's payload needs no view of its own.
 */
export function decompressBlock(data: Uint8Array, start: number, dict: ZstdDictionary | null, maxSize: number): Uint8Array {
  const size = data.length - start;
  if (size <= 0 || size >= BLOCK_MAX) throw new DecodeError(`zstd-block payload of ${size} bytes is outside 1..131071`);
  let f = dict === null ? plainBlockDecoder : BLOCK_DECODERS.get(dict);
  if (f === undefined || f === null) {
    f = new FrameDecoder(dict, BLOCK_MAX, BLOCK_MAX);
    if (dict === null) plainBlockDecoder = f;
    else BLOCK_DECODERS.set(dict, f);
  } else {
    f.reset();
  }
  f.block(data, start, data.length, 2, size, Math.min(maxSize, BLOCK_MAX));
  return f.out.slice(0, f.size);
}

const ZSTD_MAGIC = 0xfd2fb528;

export interface ZstdOptions {
  /** The dictionary the data was compressed with: raw bytes (trained or raw content) or parsed. */
  dictionary?: Uint8Array | ZstdDictionary | null;
  /** Largest decoded size accepted, in bytes (default 64 MiB). */
  maxSize?: number;
  /** Largest window accepted (default 8 MiB, as RFC 9842 asks of dcz decoders). */
  maxWindow?: number;
}

/**
 * Decode standard Zstandard data (RFC 8878): one or more frames, each with its magic number,
 * skippable frames ignored; what an HTTP `zstd` or `dcz` body holds after its header. Content
 * checksums are read but not verified (the frame's own structure and the transport's checks
 * catch corruption first); a dictionary id, when a frame has one, must match the dictionary's.
 */
export function zstdDecompress(data: Uint8Array, options: ZstdOptions = {}): Uint8Array {
  const given = options.dictionary ?? null;
  const dict = given === null || given instanceof ZstdDictionary ? given : new ZstdDictionary(given);
  const maxSize = options.maxSize ?? 64 * 1024 * 1024;
  const maxWindow = options.maxWindow ?? 8 * 1024 * 1024;
  const parts: Uint8Array[] = [];
  let total = 0;
  let pos = 0;
  if (data.length === 0) throw new TruncatedFrame("no zstd frame");
  while (pos < data.length) {
    if (pos + 4 > data.length) throw new TruncatedFrame("data ends inside a zstd magic number");
    const magic = (data[pos] | (data[pos + 1] << 8) | (data[pos + 2] << 16) | (data[pos + 3] << 24)) >>> 0;
    pos += 4;
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      if (pos + 4 > data.length) throw new TruncatedFrame("data ends inside a skippable frame");
      const size = (data[pos] | (data[pos + 1] << 8) | (data[pos + 2] << 16) | (data[pos + 3] << 24)) >>> 0;
      if (pos + 4 + size > data.length) throw new TruncatedFrame("data ends inside a skippable frame");
      pos += 4 + size;
      continue;
    }
    if (magic !== ZSTD_MAGIC) throw new DecodeError("not Zstandard data (bad magic number)");
    const h = readFrameHeader(data, pos);
    if (h.dictionaryId !== 0 && (dict === null || dict.id !== h.dictionaryId)) {
      throw new DecodeError(`zstd frame needs dictionary ${h.dictionaryId}`);
    }
    if (h.windowSize > maxWindow) throw new LimitExceeded(`frame needs a ${h.windowSize}-byte window, over the limit of ${maxWindow}`);
    const left = maxSize - total;
    if (h.contentSize > left) throw new LimitExceeded(`frame declares ${h.contentSize} decoded bytes, over the limit of ${maxSize}`);
    const f = new FrameDecoder(dict, Math.max(h.windowSize, 1), h.contentSize >= 0 ? h.contentSize : Math.min(left, BLOCK_MAX));
    pos = f.blocksUntilLast(data, h.end, left);
    if (h.checksum) {
      if (pos + 4 > data.length) throw new TruncatedFrame("data ends inside a zstd content checksum");
      pos += 4;
    }
    if (h.contentSize >= 0 && f.size !== h.contentSize) {
      throw new DecodeError(`zstd frame decodes to ${f.size} bytes, not the ${h.contentSize} it declares`);
    }
    parts.push(f.out.subarray(0, f.size));
    total += f.size;
  }
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(total);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
