// Session records (spec/WIRE_FORMAT.md §4): one zstd frame per context, kept open across
// records, each record decodable as soon as it arrives.

import { crc32 } from "./crc32.js";
import { ChecksumMismatch, DecodeError, LimitExceeded, ZerocError } from "./errors.js";
import { readVarint } from "./frame.js";
import { BLOCK_MAX, FrameDecoder, ZstdDictionary, readFrameHeader } from "./zstd.js";

const FORM_RESERVED = 3;

export interface SessionOptions {
  /** The record content's framing: json messages end with a newline, the others are varint-prefixed. */
  lines: boolean;
  dictionary: ZstdDictionary | null;
  checksum: boolean;
  maxDecodedSize: number;
  maxWindowSize: number;
}

/**
 * Decodes one session's records, in order, to their messages' serializations. After any error
 * the context is lost: records are refused until one that resets.
 */
export class SessionRecords {
  private frame: FrameDecoder | null = null;

  constructor(private readonly o: SessionOptions) {}

  decode(record: Uint8Array): Uint8Array[] {
    try {
      return this.decodeRecord(record);
    } catch (e) {
      if (e instanceof ZerocError) this.frame = null;
      throw e;
    }
  }

  private decodeRecord(record: Uint8Array): Uint8Array[] {
    const [head, start] = readVarint(record, 0);
    let pos = start;
    const count = Math.floor(head / 8);
    const form = (head >> 1) & 3;
    const reset = head & 1;
    if (count === 0) throw new DecodeError("session record holds no message");
    if (form === FORM_RESERVED) throw new DecodeError("session record uses the reserved form 3");
    if (!reset && this.frame === null) {
      throw new DecodeError("session record continues a context this decoder does not hold (it must reset)");
    }
    let crc: number | null = null;
    if (this.o.checksum) {
      if (record.length < pos + 4) throw new DecodeError("session record ends inside its checksum");
      crc = (record[pos] | (record[pos + 1] << 8) | (record[pos + 2] << 16) | (record[pos + 3] << 24)) >>> 0;
      pos += 4;
    }
    const limit = this.o.maxDecodedSize;
    if (reset) {
      let windowSize: number;
      if (form === 0) {
        const h = readFrameHeader(record, pos);
        if (h.dictionaryId !== 0) throw new DecodeError("session frame carries a dictionary id");
        windowSize = h.windowSize;
        pos = h.end;
      } else {
        if (record.length < pos + 2) throw new DecodeError("session record ends inside its frame header");
        if (record[pos] !== 0) throw new DecodeError("session frame header descriptor is not 00");
        windowSize = readFrameHeader(record, pos).windowSize;
        pos += 2;
      }
      if (windowSize > this.o.maxWindowSize) {
        throw new LimitExceeded(`session needs a ${windowSize}-byte window, over the limit of ${this.o.maxWindowSize}`);
      }
      this.frame = new FrameDecoder(this.o.dictionary, windowSize, Math.min(2 * windowSize, 4 * BLOCK_MAX));
    }
    const f = this.frame!;
    f.begin();
    if (form === 0) {
      if (f.blocks(record, pos, record.length, limit) !== record.length) throw new DecodeError("session record ends inside a block");
    } else {
      const size = record.length - pos;
      if (size > BLOCK_MAX) throw new DecodeError(`session block of ${size} bytes exceeds 128 KiB`);
      if (f.ended) throw new DecodeError("data after the session frame's last block");
      f.block(record, pos, record.length, form === 1 ? 2 : 0, size, limit);
    }
    const content = f.output();
    if (crc !== null && crc32(content) !== crc) throw new ChecksumMismatch("session record checksum does not match its content");
    return split(content, count, this.o.lines);
  }
}

function split(content: Uint8Array, count: number, lines: boolean): Uint8Array[] {
  const out: Uint8Array[] = [];
  let pos = 0;
  if (lines) {
    while (pos < content.length) {
      const nl = content.indexOf(0x0a, pos);
      if (nl < 0) break;
      out.push(content.slice(pos, nl));
      pos = nl + 1;
    }
  } else {
    while (pos < content.length && out.length < count) {
      let n: number;
      [n, pos] = readVarint(content, pos);
      if (pos + n > content.length) break;
      out.push(content.slice(pos, pos + n));
      pos += n;
    }
  }
  if (out.length !== count || pos !== content.length) throw new DecodeError(`session record content is not ${count} complete messages`);
  return out;
}
