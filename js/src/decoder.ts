// Decoding frames and streams (spec/WIRE_FORMAT.md) with a dictionary and the limits a
// receiver sets: the browser's side of zeroc.Codec.

import { crc32 } from "./crc32.js";
import { Dictionary, hex } from "./dictionary.js";
import { ChecksumMismatch, DecodeError, DictionaryMismatch, LimitExceeded, UnknownDictionary, UnsupportedFrame } from "./errors.js";
import { Header, Method, Ref, parseFrame, parseStreamHeader, streamRecords } from "./frame.js";
import { inflateRaw } from "./inflate.js";
import { parseJSON, pythonText, unwrapFloats } from "./json.js";
import { SessionRecords } from "./session.js";
import { SideEngine } from "./learned.js";
import { ZstdDictionary, decompressBlock, decompressFrame } from "./zstd.js";

export interface DecoderOptions {
  /** Largest decoded message, in bytes (default 64 MiB; LimitExceeded past it). */
  maxDecodedSize?: number;
  /** Largest zstd window accepted (default 8 MiB, as RFC 9842 asks of dcz decoders). */
  maxWindowSize?: number;
  /** Refuse frames without a CRC-32 (a transport without integrity checks). */
  checksum?: boolean;
  /** Other dictionaries that frames may name by identity or short id (rotation). */
  store?: DictionaryStore;
}

/** Dictionaries by identity and short id. Two with one short id are never guessed between. */
export class DictionaryStore {
  private readonly byId = new Map<string, Dictionary>();
  private readonly byShort = new Map<number, Dictionary[]>();

  constructor(dictionaries: Iterable<Dictionary> = []) {
    for (const d of dictionaries) this.add(d);
  }

  add(d: Dictionary): void {
    if (this.byId.has(d.id)) return;
    this.byId.set(d.id, d);
    const same = this.byShort.get(d.shortId) ?? [];
    same.push(d);
    this.byShort.set(d.shortId, same);
  }

  get(sha256: Uint8Array): Dictionary {
    const d = this.byId.get(hex(sha256));
    if (d === undefined) throw new UnknownDictionary(`dictionary ${hex(sha256)} is not in the store`);
    return d;
  }

  getShort(shortId: number): Dictionary {
    const same = this.byShort.get(shortId) ?? [];
    if (same.length === 0) throw new UnknownDictionary(`no dictionary with short id ${shortId} in the store`);
    if (same.length > 1) throw new UnknownDictionary(`${same.length} dictionaries share short id ${shortId}: name it by SHA-256`);
    return same[0];
  }
}

const NO_DICTIONARY = "no dictionary";

const FAST_TAG = Method.ZstdBlock | (Ref.Context << 3);
const LEARNED_TAG = Method.Learned | (Ref.Context << 3);

/** Decodes frames, streams and sessions made with one dictionary (or none). */
export class Decoder {
  readonly dictionary: Dictionary | null;
  readonly maxDecodedSize: number;
  readonly maxWindowSize: number;
  readonly checksum: boolean;
  readonly store: DictionaryStore | null;
  private readonly others = new Map<string, Decoder>();
  private engine: SideEngine | null = null;

  constructor(dictionary: Dictionary | null = null, options: DecoderOptions = {}) {
    this.dictionary = dictionary;
    this.maxDecodedSize = options.maxDecodedSize ?? 64 * 1024 * 1024;
    this.maxWindowSize = options.maxWindowSize ?? 8 * 1024 * 1024;
    this.checksum = options.checksum ?? false;
    this.store = options.store ?? null;
  }

  /** The serialization's name: the dictionary's, or json without one. */
  get serialization(): string {
    return this.dictionary?.serialization ?? "json";
  }

  /** Decode one frame to its value: parsed JSON for json, an object for protobuf, bytes for bytes. */
  decode(frame: Uint8Array): unknown {
    // The common frames: zstd-block or learned with the context's dictionary, no checksum.
    if (frame.length > 1 && this.dictionary !== null && !this.checksum) {
      if (frame[0] === FAST_TAG) return this.value(decompressBlock(frame, 1, this.dictionary.zstd(), this.maxDecodedSize));
      if (frame[0] === LEARNED_TAG && this.dictionary.model !== null) {
        return this.dictionary.learnedModel().decodeAt(frame, 1, this.sideEngine(this.dictionary), this.maxDecodedSize);
      }
    }
    const [owner, payload, value] = this.decodeOwned(frame, null);
    return payload === null ? unwrapFloats(value) : owner.value(payload);
  }

  /** A learned-model payload alone, as a codec with `frame_id="bare"` writes it. */
  decodeBare(payload: Uint8Array): unknown {
    if (this.dictionary === null || this.dictionary.model === null) throw new DecodeError("bare payloads need a dictionary with a learned model");
    return unwrapFloats(this.learned(payload, this.dictionary, null));
  }

  /**
   * Decode one frame to its serialization (JSON text, protobuf bytes or raw bytes); a learned
   * frame, which codes the value itself, to the value's JSON text as Python writes it (for a
   * protobuf dictionary too: this package writes no protobuf).
   */
  decodePayload(frame: Uint8Array): Uint8Array {
    // The common frame: zstd-block with the context's dictionary, no checksum.
    if (frame.length > 1 && frame[0] === FAST_TAG && this.dictionary !== null && !this.checksum) {
      return decompressBlock(frame, 1, this.dictionary.zstd(), this.maxDecodedSize);
    }
    const [, payload, value] = this.decodeOwned(frame, null);
    return payload ?? pythonText(value);
  }

  /** The value of a serialization made with this decoder's dictionary. */
  value(payload: Uint8Array): unknown {
    const s = this.serialization;
    if (s === "json") return parseJSON(payload);
    return s === "protobuf" ? this.dictionary!.messageSchema().decode(payload) : payload;
  }

  /** A stream's records, the dictionary its header names, and for a session stream (§4) the
   * decoder of its records. */
  private openStream(data: Uint8Array) {
    const header = parseStreamHeader(data);
    const context = header.sha256 === null ? null : this.resolveSha(header.sha256);
    const records = streamRecords(data, header, this.maxDecodedSize + 64);
    const owner = !header.session ? null : context === null ? this : this.other(context);
    const session = owner?.sessionDecoder({ checksum: header.checksummed, dictionary: context !== null }) ?? null;
    return { context, records, session };
  }

  /** Decode a whole stream (§3) to its messages' serializations, in order. */
  decodeStreamPayloads(data: Uint8Array): Uint8Array[] {
    const { context, records, session } = this.openStream(data);
    const out: Uint8Array[] = [];
    for (const record of records) {
      if (session !== null) {
        out.push(...session.decodeManyPayloads(record));
      } else {
        const [, payload, value] = this.decodeOwned(record, context);
        out.push(payload ?? pythonText(value));
      }
    }
    return out;
  }

  /** Decode a whole stream to its messages' values (a learned frame's or record's straight
   * from the model, whatever the dictionary's serialization). */
  decodeStream(data: Uint8Array): unknown[] {
    const { context, records, session } = this.openStream(data);
    const out: unknown[] = [];
    for (const record of records) {
      if (session !== null) {
        out.push(...session.decodeMany(record));
      } else {
        const [owner, payload, value] = this.decodeOwned(record, context);
        out.push(payload === null ? unwrapFloats(value) : owner.value(payload));
      }
    }
    return out;
  }

  /** A decoder for one session's records (§4), in order, starting from this dictionary. */
  sessionDecoder(options: { checksum?: boolean; dictionary?: boolean } = {}): SessionDecoder {
    const useDict = (options.dictionary ?? true) && this.dictionary !== null;
    const dict = this.dictionary;
    return new SessionDecoder(this, {
      lines: this.serialization === "json",
      dictionary: useDict ? dict!.zstd() : null,
      checksum: options.checksum ?? this.checksum,
      maxDecodedSize: this.maxDecodedSize,
      maxWindowSize: this.maxWindowSize,
      // learned records (form 3) only in a session that starts from a dictionary with a model
      learned: useDict && dict!.model !== null ? (payload) => this.learned(payload, dict!, null) : null,
    });
  }

  /**
   * [the decoder whose dictionary the frame names, its serialization or null, the value of a
   * learned frame (its integral floats still PyFloats: `pythonText` writes it as Python does)].
   */
  private decodeOwned(frame: Uint8Array, context: Dictionary | null): [Decoder, Uint8Array | null, unknown] {
    const h = parseFrame(frame);
    if (this.checksum && h.checksum === null) throw new ChecksumMismatch("frame has no checksum, and this decoder expects one");
    const owner = h.ref === Ref.None ? this : this.owner(h, context);
    const dict = h.ref === Ref.None ? null : owner.dictionary;
    if (h.method === Method.Learned) {
      if (dict === null || dict.model === null) throw new DecodeError("a learned-model frame names a dictionary without a model");
      return [owner, null, owner.learned(h.payload, dict, h.checksum)];
    }
    return [owner, owner.payload(h, dict), undefined];
  }

  private learned(payload: Uint8Array, dict: Dictionary, checksum: number | null): unknown {
    return dict.learnedModel().decodeTyped(payload, this.sideEngine(dict), this.maxDecodedSize, checksum);
  }

  /** What decompresses the side streams of learned payloads made with `dict` (kept for its own). */
  private sideEngine(dict: Dictionary): SideEngine {
    if (dict === this.dictionary && this.engine !== null) return this.engine;
    const zstd = dict.zstd();
    const engine: SideEngine = (mode, data, max) =>
      mode === Method.ZstdBlock
        ? decompressBlock(data, 0, zstd, max)
        : decompressFrame(data, zstd, { maxSize: max, maxWindow: this.maxWindowSize }, true);
    if (dict === this.dictionary) this.engine = engine;
    return engine;
  }

  private payload(h: Header, dict: Dictionary | null): Uint8Array {
    let data: Uint8Array;
    const max = this.maxDecodedSize;
    switch (h.method) {
      case Method.Stored:
        if (h.payload.length > max) throw new LimitExceeded(`stored payload of ${h.payload.length} bytes exceeds the limit`);
        data = h.payload;
        break;
      case Method.ZstdBlock:
        data = decompressBlock(h.payload, 0, this.zstd(dict), max);
        break;
      case Method.ZstdFrame:
        data = decompressFrame(h.payload, this.zstd(dict), { maxSize: max, maxWindow: this.maxWindowSize }, true);
        break;
      case Method.Deflate:
        data = inflateRaw(h.payload, dict === null ? null : dict.deflateWindow(), max);
        break;
      default:
        throw new UnsupportedFrame(`frame method ${h.method}`);
    }
    if (h.checksum !== null && crc32(data) !== h.checksum) throw new ChecksumMismatch("frame checksum does not match its decoded content");
    return data;
  }

  private zstd(dict: Dictionary | null): ZstdDictionary | null {
    return dict === null ? null : dict.zstd();
  }

  /** The decoder whose dictionary a frame names. */
  private owner(h: Header, context: Dictionary | null): Decoder {
    const mine = this.dictionary;
    if (h.ref === Ref.Context) {
      if (context !== null && (mine === null || context.id !== mine.id)) return this.other(context);
      if (mine === null) throw new UnknownDictionary(`frame was compressed with a dictionary but this decoder has ${NO_DICTIONARY}`);
      return this;
    }
    const ref = h.reference;
    if (mine !== null && (h.ref === Ref.Sha256 ? hex(ref) === mine.id : (ref[0] | (ref[1] << 8)) === mine.shortId)) return this;
    if (this.store === null) {
      if (mine === null) throw new UnknownDictionary(`frame names dictionary ${hex(ref)} and this decoder has ${NO_DICTIONARY}`);
      throw new DictionaryMismatch(`frame names dictionary ${hex(ref)}, this decoder holds ${mine.id.slice(0, 16)}`);
    }
    return this.other(h.ref === Ref.Sha256 ? this.store.get(ref) : this.store.getShort(ref[0] | (ref[1] << 8)));
  }

  private resolveSha(sha: Uint8Array): Dictionary {
    if (this.dictionary !== null && hex(sha) === this.dictionary.id) return this.dictionary;
    if (this.store === null) throw new DictionaryMismatch(`stream names dictionary ${hex(sha).slice(0, 16)}, which this decoder lacks`);
    return this.store.get(sha);
  }

  private other(d: Dictionary): Decoder {
    if (this.dictionary !== null && d.id === this.dictionary.id) return this;
    let dec = this.others.get(d.id);
    if (dec === undefined) {
      dec = new Decoder(d, { maxDecodedSize: this.maxDecodedSize, maxWindowSize: this.maxWindowSize, checksum: this.checksum });
      this.others.set(d.id, dec);
    }
    return dec;
  }
}

/** One session's records, decoded in order to values (or serializations). */
export class SessionDecoder {
  private readonly records: SessionRecords;

  constructor(
    private readonly owner: Decoder,
    options: ConstructorParameters<typeof SessionRecords>[0],
  ) {
    this.records = new SessionRecords(options);
  }

  /** The serializations of every message of `record`, in order (a learned record's: each
   * value's JSON text as Python writes it). */
  decodeManyPayloads(record: Uint8Array): Uint8Array[] {
    return this.records.decode(record).map((m) => m.payload ?? pythonText(m.value));
  }

  /** Every message of `record`, in order. */
  decodeMany(record: Uint8Array): unknown[] {
    return this.records.decode(record).map((m) => (m.payload === null ? unwrapFloats(m.value) : this.owner.value(m.payload)));
  }

  /** The one message of `record`. */
  decode(record: Uint8Array): unknown {
    const values = this.decodeMany(record);
    if (values.length !== 1) throw new DecodeError(`session record holds ${values.length} messages, not one: use decodeMany`);
    return values[0];
  }
}
