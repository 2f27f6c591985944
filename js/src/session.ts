// Session records (spec/WIRE_FORMAT.md §4): one zstd frame per context, kept open across
// records, each record decodable as soon as it arrives.

import { crc32 } from "./crc32.js";
import { ChecksumMismatch, DecodeError, LimitExceeded, ZerocError } from "./errors.js";
import { readVarint } from "./frame.js";
import { pythonText } from "./json.js";
import { BLOCK_MAX, FrameDecoder, ZstdDictionary, readFrameHeader } from "./zstd.js";

const FORM_LEARNED = 3;

/** A message of a record: its serialization, or (a learned record's) its value as the model
 * decodes it (integral floats still PyFloats). */
export type SessionMessage = { payload: Uint8Array; value?: undefined } | { payload: null; value: unknown };

export interface SessionOptions {
  /** The record content's framing: json messages end with a newline, the others are varint-prefixed. */
  lines: boolean;
  dictionary: ZstdDictionary | null;
  checksum: boolean;
  maxDecodedSize: number;
  maxWindowSize: number;
  /** The dictionary's learned model, for learned records (form 3): a payload's value. */
  learned: ((payload: Uint8Array) => unknown) | null;
}

/**
 * Decodes one session's records, in order, to their messages' serializations. After any error
 * the context is lost: records are refused until one that resets.
 */
export class SessionRecords {
  private frame: FrameDecoder | null = null;
  /** Whether a record that reset came, and no error since. */
  private live = false;

  constructor(private readonly o: SessionOptions) {}

  decode(record: Uint8Array): SessionMessage[] {
    try {
      return this.decodeRecord(record);
    } catch (e) {
      if (e instanceof ZerocError) {
        this.frame = null;
        this.live = false;
      }
      throw e;
    }
  }

  private decodeRecord(record: Uint8Array): SessionMessage[] {
    const [head, start] = readVarint(record, 0);
    let pos = start;
    const count = Math.floor(head / 8);
    const form = (head >> 1) & 3;
    const reset = head & 1;
    if (count === 0) throw new DecodeError("session record holds no message");
    if (!reset && !this.live) {
      throw new DecodeError("session record continues a context this decoder does not hold (it must reset)");
    }
    if (form === FORM_LEARNED && this.o.learned === null) {
      throw new DecodeError("session record of form 3 (learned) in a session without a learned model");
    }
    let crc: number | null = null;
    if (this.o.checksum) {
      if (record.length < pos + 4) throw new DecodeError("session record ends inside its checksum");
      crc = (record[pos] | (record[pos + 1] << 8) | (record[pos + 2] << 16) | (record[pos + 3] << 24)) >>> 0;
      pos += 4;
    }
    if (form === FORM_LEARNED) {
      if (reset) {
        this.frame = null; // the context ends here: the next zstd record must start another
        this.live = true;
      }
      return this.unlearn(record, pos, count, crc);
    }
    if (!reset && this.frame === null) {
      throw new DecodeError("session record continues a context that a learned record ended (it must reset)");
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
      this.live = true;
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
    return split(content, count, this.o.lines).map((payload) => ({ payload }));
  }

  /** A learned record's messages: `count` payloads from `pos`, each after its varint length but
   * the last, which is the rest of the record. */
  private unlearn(record: Uint8Array, pos: number, count: number, crc: number | null): SessionMessage[] {
    const learned = this.o.learned!;
    const out: SessionMessage[] = [];
    const incomplete = () => new DecodeError(`learned session record is not ${count} complete payloads`);
    for (let i = 0; i + 1 < count; i++) {
      if (pos >= record.length) throw incomplete();
      let n: number;
      [n, pos] = readVarint(record, pos);
      if (pos + n > record.length) throw incomplete();
      out.push({ payload: null, value: learned(record.subarray(pos, pos + n)) });
      pos += n;
    }
    out.push({ payload: null, value: learned(record.subarray(pos)) });
    if (crc !== null) {
      const texts = out.map((m) => pythonText(m.value));
      const all = new Uint8Array(texts.reduce((n, t) => n + t.length + 1, 0));
      let at = 0;
      for (const t of texts) {
        all.set(t, at);
        all[at + t.length] = 0x0a;
        at += t.length + 1;
      }
      if (crc32(all) !== crc) throw new ChecksumMismatch("session record checksum does not match its messages");
    }
    return out;
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
