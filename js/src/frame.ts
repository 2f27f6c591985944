// The wire format's framing (spec/WIRE_FORMAT.md §1 and §3) as pure functions.

import { ChecksumMismatch, DecodeError, LimitExceeded, TruncatedFrame, UnsupportedFrame } from "./errors.js";

export const enum Method {
  Stored = 0,
  ZstdBlock = 1,
  ZstdFrame = 2,
  Deflate = 3,
  Learned = 4,
}

export const enum Ref {
  None = 0,
  Context = 1,
  ShortId = 2,
  Sha256 = 3,
}

const REF_SIZE = [0, 0, 2, 32];
export const CHECKSUM_FLAG = 0x20;

export interface Header {
  method: Method;
  ref: Ref;
  /** 0, 2 or 32 bytes, as in the frame. */
  reference: Uint8Array;
  checksum: number | null;
  payload: Uint8Array;
}

/** Split a frame into its header fields and payload, rejecting what version 1 does not define. */
export function parseFrame(frame: Uint8Array): Header {
  if (frame.length === 0) throw new TruncatedFrame("empty frame: a frame has at least its tag byte");
  const t = frame[0];
  const tag = (): string => `(tag 0x${t.toString(16).padStart(2, "0")})`;
  if (t >> 6) throw new UnsupportedFrame(`frame format version ${(t >> 6) + 1} is not supported ${tag()}`);
  const method = t & 7;
  if (method > Method.Learned) throw new UnsupportedFrame(`frame method ${method} is reserved ${tag()}`);
  const ref = (t >> 3) & 3;
  if (method === Method.Learned && ref === Ref.None) {
    throw new UnsupportedFrame(`a learned-model frame must name its dictionary ${tag()}`);
  }
  const pos = 1 + REF_SIZE[ref];
  const end = pos + (t & CHECKSUM_FLAG ? 4 : 0);
  if (frame.length < end) throw new TruncatedFrame(`frame of ${frame.length} bytes ends inside its ${end}-byte header`);
  const checksum = t & CHECKSUM_FLAG ? (frame[pos] | (frame[pos + 1] << 8) | (frame[pos + 2] << 16) | (frame[pos + 3] << 24)) >>> 0 : null;
  const payload = frame.subarray(end);
  if (payload.length === 0 && method !== Method.Stored && method !== Method.Learned) {
    throw new TruncatedFrame(`method ${method} frame has no payload`);
  }
  return { method, ref, reference: frame.subarray(1, pos), checksum, payload };
}

const MAX_VARINT_BYTES = 5;

/** Read a varint of at most `maxBytes` at `pos`: [value, next position] (exact below 2^53). */
export function readVarint(data: Uint8Array, pos: number, maxBytes = MAX_VARINT_BYTES): [number, number] {
  let value = 0;
  for (let i = 0; i < maxBytes; i++) {
    if (pos + i >= data.length) throw new TruncatedFrame(`data ends inside a varint at byte ${pos}`);
    const b = data[pos + i];
    value += (b & 0x7f) * 2 ** (7 * i);
    if (!(b & 0x80)) return [value, pos + i + 1];
  }
  throw new DecodeError(`varint at byte ${pos} is longer than ${maxBytes} bytes`);
}

const STREAM_MAGIC = [0x5a, 0x52, 0x43, 0x53]; // "ZRCS"
const STREAM_SHA = 1;
const STREAM_SESSION = 4;

export interface StreamHeader {
  /** Version 2: every frame (or session record) carries a CRC-32. */
  checksummed: boolean;
  session: boolean;
  /** The dictionary that frames with ref = 1 use, or null. */
  sha256: Uint8Array | null;
  /** Where the first record starts. */
  end: number;
}

export function parseStreamHeader(data: Uint8Array): StreamHeader {
  const magic = STREAM_MAGIC.every((b, i) => i >= data.length || data[i] === b);
  if (!magic) throw new DecodeError("not a Zeroc stream (bad magic)");
  if (data.length < 6) throw new TruncatedFrame(`stream of ${data.length} bytes ends inside its header`);
  if (data[4] !== 1 && data[4] !== 2) throw new UnsupportedFrame(`stream version ${data[4]} is not supported`);
  const flags = data[5];
  if (flags & ~(STREAM_SHA | STREAM_SESSION)) {
    throw new UnsupportedFrame(`stream flags 0x${flags.toString(16).padStart(2, "0")} use reserved bits`);
  }
  let sha256: Uint8Array | null = null;
  let end = 6;
  if (flags & STREAM_SHA) {
    if (data.length < 38) throw new TruncatedFrame("stream ends inside its dictionary hash");
    sha256 = data.subarray(6, 38);
    end = 38;
  }
  return { checksummed: data[4] === 2, session: (flags & STREAM_SESSION) !== 0, sha256, end };
}

/** The records of a whole stream held in memory, checked as §3 says. */
export function* streamRecords(data: Uint8Array, header: StreamHeader, maxRecord: number): Generator<Uint8Array> {
  let p = header.end;
  const frames = !header.session;
  for (;;) {
    let length: number;
    [length, p] = readVarint(data, p);
    if (length === 0) {
      if (p !== data.length) throw new DecodeError(`${data.length - p} bytes after the end of the stream`);
      return;
    }
    if (length > maxRecord) throw new LimitExceeded(`stream record of ${length} bytes exceeds the frame limit ${maxRecord}`);
    if (p + length > data.length) throw new TruncatedFrame(`stream ends inside a ${length}-byte record at byte ${p}`);
    if (frames && header.checksummed && !(data[p] & CHECKSUM_FLAG)) {
      throw new ChecksumMismatch(`a frame of this checksummed stream has no CRC-32 (byte ${p})`);
    }
    yield data.subarray(p, p + length);
    p += length;
  }
}
