// Dictionary files (.zcd, spec/DICTIONARY_FORMAT.md): read, verified, and parsed once.

import { InvalidDictionary, ZerocError } from "./errors.js";
import { Model } from "./learned.js";
import { Schema } from "./protobuf.js";
import { ZstdDictionary, zstdDecompress } from "./zstd.js";

const MAGIC = [0x5a, 0x52, 0x43, 0x44]; // "ZRCD"
const MAX_METADATA = 16 * 1024 * 1024;
const MAX_CONTENT = 16 * 1024 * 1024;
const MAX_MODEL = 64 * 1024 * 1024;
const SERIALIZATIONS = ["json", "protobuf", "bytes"];
const METHODS = ["zstd", "deflate", "learned"];
const DEFLATE_WINDOW = 32 * 1024;

export type Serialization = "json" | "protobuf" | "bytes";

/** The SHA-256 of `data` (WebCrypto: browsers on secure origins, loopback included, and Node). */
export async function sha256(data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await (await subtle()).digest("SHA-256", data as Uint8Array<ArrayBuffer>));
}

/** WebCrypto's digests: the global one, or Node 18's (which has no global `crypto`). */
async function subtle(): Promise<SubtleCrypto> {
  if (globalThis.crypto?.subtle) return globalThis.crypto.subtle;
  const name = "node:crypto"; // a variable: browsers never resolve it, TypeScript never types it
  const node = (await import(name)) as { webcrypto: { subtle: SubtleCrypto } };
  return node.webcrypto.subtle;
}

export function hex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** A trained dictionary: its content, identity, serialization, schema and (version 2) model. */
export class Dictionary {
  /** SHA-256 identity (spec/WIRE_FORMAT.md §1.2), which frames name. */
  readonly digest: Uint8Array;
  readonly id: string;
  /** The uint16 short id: the identity's first two bytes, little-endian. */
  readonly shortId: number;
  /** The zstd dictionary bytes. */
  readonly content: Uint8Array;
  /** The learned model section, or null. */
  readonly model: Uint8Array | null;
  readonly serialization: Serialization;
  /** `{message, descriptor_set, fingerprint}` for protobuf, else null. */
  readonly schema: { message: string; descriptor_set: string; fingerprint: string } | null;
  readonly codec: { method: string; level: number };
  readonly metadata: Record<string, unknown>;
  private zstdDict: ZstdDictionary | null = null;
  private protobuf: Schema | null = null;
  private learned: Model | null = null;

  private constructor(meta: Record<string, unknown>, content: Uint8Array, model: Uint8Array | null, digest: Uint8Array) {
    this.metadata = meta;
    this.content = content;
    this.model = model;
    this.digest = digest;
    this.id = hex(digest);
    this.shortId = digest[0] | (digest[1] << 8);
    this.serialization = meta.serialization as Serialization;
    this.schema = (meta.schema ?? null) as Dictionary["schema"];
    const codec = meta.codec as { method: string; level: number };
    this.codec = { method: codec.method, level: codec.level };
  }

  /** Read and verify a dictionary file: its layout, its trailing SHA-256 and its identity. */
  static async fromBytes(data: Uint8Array): Promise<Dictionary> {
    if (data.length < 12 + 4 + 32 || MAGIC.some((b, i) => data[i] !== b)) {
      throw new InvalidDictionary("not a Zeroc dictionary file (bad magic or too short)");
    }
    const version = data[4];
    if (version !== 1 && version !== 2) throw new InvalidDictionary(`dictionary format version ${version} is not supported`);
    if (data[5] || data[6] || data[7]) throw new InvalidDictionary("dictionary file has non-zero reserved bytes");
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    const m = view.getUint32(8, true);
    if (m > MAX_METADATA || 12 + m + 4 + 32 > data.length) {
      throw new InvalidDictionary(`metadata length ${m} runs past the end of the file`);
    }
    const c = view.getUint32(12 + m, true);
    let end = 16 + m + c;
    if (c === 0 || c > MAX_CONTENT || end + 32 > data.length) {
      throw new InvalidDictionary(`content length ${c} is invalid for a ${data.length}-byte file`);
    }
    const content = data.slice(16 + m, end);
    let model: Uint8Array | null = null;
    if (version === 2) {
      if (end + 4 + 32 > data.length) throw new InvalidDictionary("version 2 dictionary file ends before its model section");
      const size = view.getUint32(end, true);
      if (size === 0 || size > MAX_MODEL || end + 4 + size + 32 > data.length) {
        throw new InvalidDictionary(`model section length ${size} is invalid for a ${data.length}-byte file`);
      }
      model = data.slice(end + 4, end + 4 + size);
      end += 4 + size;
    }
    if (end + 32 !== data.length) throw new InvalidDictionary(`${data.length - end - 32} unexpected bytes at the end of the file`);
    const whole = await sha256(data.subarray(0, end));
    if (whole.some((b, i) => data[end + i] !== b)) {
      throw new InvalidDictionary("dictionary file fails its SHA-256 check (corrupt or truncated)");
    }
    let meta: unknown;
    try {
      meta = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(data.subarray(12, 12 + m)));
    } catch (e) {
      throw new InvalidDictionary(`dictionary metadata is not JSON: ${(e as Error).message}`);
    }
    const digest = model === null ? await sha256(content) : await sha256(concat(await sha256(content), await sha256(model)));
    return new Dictionary(await checkMetadata(meta, model, digest), content, model, digest);
  }

  /** The zstd dictionary, parsed on first use and kept. */
  zstd(): ZstdDictionary {
    if (this.zstdDict === null) {
      try {
        this.zstdDict = new ZstdDictionary(this.content);
      } catch (e) {
        if (e instanceof ZerocError) throw new InvalidDictionary(`zstd dictionary content does not load: ${e.message}`);
        throw e;
      }
    }
    return this.zstdDict;
  }

  /** The protobuf schema of a protobuf dictionary, read on first use and kept. */
  messageSchema(): Schema {
    if (this.schema === null) throw new InvalidDictionary(`a ${this.serialization} dictionary has no schema`);
    if (this.protobuf === null) this.protobuf = new Schema(base64(this.schema.descriptor_set), this.schema.message);
    return this.protobuf;
  }

  /** The learned model of a version-2 file, read and checked on first use and kept. */
  learnedModel(): Model {
    if (this.model === null) throw new InvalidDictionary("this dictionary holds no learned model");
    if (this.learned === null) {
      let document: Uint8Array;
      try {
        document = zstdDecompress(this.model, { maxSize: MAX_MODEL });
      } catch (e) {
        if (e instanceof ZerocError) throw new InvalidDictionary(`learned model section does not decompress: ${e.message}`);
        throw e;
      }
      this.learned = new Model(document);
    }
    return this.learned;
  }

  /** DEFLATE's preset dictionary: the content's last 32 KiB (spec/WIRE_FORMAT.md §1.4). */
  deflateWindow(): Uint8Array {
    return this.content.subarray(Math.max(0, this.content.length - DEFLATE_WINDOW));
  }
}

function base64(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4) throw new InvalidDictionary("schema descriptor set is not base64");
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

async function checkMetadata(meta: unknown, model: Uint8Array | null, digest: Uint8Array): Promise<Record<string, unknown>> {
  if (typeof meta !== "object" || meta === null || Array.isArray(meta)) {
    throw new InvalidDictionary("dictionary metadata is not a JSON object");
  }
  const m = meta as Record<string, unknown>;
  const want: [string, string][] = [
    ["sha256", "string"],
    ["serialization", "string"],
    ["codec", "object"],
    ["preference", "string"],
    ["created", "string"],
    ["samples", "integer"],
    ["validation", "object"],
    ["zeroc_version", "string"],
  ];
  for (const [key, type] of want) {
    const v = m[key];
    const ok =
      type === "integer" ? Number.isInteger(v) : type === "object" ? typeof v === "object" && v !== null && !Array.isArray(v) : typeof v === type;
    if (!ok) throw new InvalidDictionary(`dictionary metadata lacks '${key}' of type ${type}`);
  }
  const codec = m.codec as Record<string, unknown>;
  if (!METHODS.includes(codec.method as string) || !Number.isInteger(codec.level)) {
    throw new InvalidDictionary(`dictionary codec ${JSON.stringify(codec)} is not supported`);
  }
  if ((codec.method === "learned") !== (model !== null)) {
    throw new InvalidDictionary("a learned codec needs a model section, and a model section a learned codec");
  }
  if (!SERIALIZATIONS.includes(m.serialization as string)) {
    throw new InvalidDictionary(`serialization ${JSON.stringify(m.serialization)} is not supported`);
  }
  const schema = m.schema as Record<string, unknown> | null | undefined;
  if (m.serialization === "protobuf") {
    if (typeof schema !== "object" || schema === null || !["message", "descriptor_set", "fingerprint"].every((k) => typeof schema[k] === "string")) {
      throw new InvalidDictionary("protobuf dictionary lacks its schema");
    }
    if (hex(await sha256(base64(schema.descriptor_set as string))) !== schema.fingerprint) {
      throw new InvalidDictionary("schema descriptor set does not match its fingerprint");
    }
  } else if (schema !== undefined && schema !== null) {
    throw new InvalidDictionary(`a ${m.serialization} dictionary has no schema`);
  }
  if (hex(digest) !== m.sha256) throw new InvalidDictionary("dictionary content does not match its SHA-256");
  return m;
}
