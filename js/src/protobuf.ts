// The protobuf serialization (spec/WIRE_FORMAT.md §2) to the values the Python side gives:
// fields in number order; fields without explicit presence (proto3 scalars, repeated, maps)
// always there unless the presence record says they were absent; enums by name; float32 as the
// shortest decimal that is the same float32; 64-bit integers as numbers, or BigInt past 2^53;
// bytes as Uint8Array; map entries by key. The schema is the FileDescriptorSet a dictionary
// carries, read here with the same wire decoder, so nothing from the file is ever evaluated.

import { DecodeError } from "./errors.js";

const enum Wire {
  Varint = 0,
  I64 = 1,
  Len = 2,
  StartGroup = 3,
  EndGroup = 4,
  I32 = 5,
}

const enum T {
  Double = 1,
  Float = 2,
  Int64 = 3,
  Uint64 = 4,
  Int32 = 5,
  Fixed64 = 6,
  Fixed32 = 7,
  Bool = 8,
  String = 9,
  Group = 10,
  Message = 11,
  Bytes = 12,
  Uint32 = 13,
  Enum = 14,
  Sfixed32 = 15,
  Sfixed64 = 16,
  Sint32 = 17,
  Sint64 = 18,
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });
const TWO32 = 4294967296;

/** A wire reader; `lo`/`hi` hold the last varint's two 32-bit halves. */
class Reader {
  pos: number;
  lo = 0;
  hi = 0;
  private dataView: DataView | null = null;

  constructor(
    readonly d: Uint8Array,
    pos = 0,
    public end = d.length,
  ) {
    this.pos = pos;
  }

  private get view(): DataView {
    return (this.dataView ??= new DataView(this.d.buffer, this.d.byteOffset, this.d.byteLength));
  }

  fail(what: string): never {
    throw new DecodeError(`invalid protobuf payload: ${what} at byte ${this.pos}`);
  }

  /** Read a varint into lo/hi; returns lo (the whole value when it fits 32 bits). */
  varint(): number {
    const d = this.d;
    let p = this.pos;
    let lo = 0;
    let hi = 0;
    let shift = 0;
    let b: number;
    do {
      if (p >= this.end) this.fail("data ends inside a varint");
      b = d[p++];
      if (shift < 28) lo |= (b & 0x7f) << shift;
      else if (shift === 28) {
        lo |= (b & 0x0f) << 28;
        hi = (b & 0x7f) >> 4;
      } else {
        if (shift >= 70) this.fail("varint longer than 10 bytes");
        hi |= (b & 0x7f) << (shift - 32);
      }
      shift += 7;
    } while (b & 0x80);
    this.pos = p;
    this.lo = lo >>> 0;
    this.hi = hi >>> 0;
    return this.lo;
  }

  fixed32(): number {
    if (this.pos + 4 > this.end) this.fail("data ends inside a fixed32");
    this.lo = this.view.getUint32(this.pos, true);
    this.hi = 0;
    this.pos += 4;
    return this.lo;
  }

  fixed64(): void {
    if (this.pos + 8 > this.end) this.fail("data ends inside a fixed64");
    this.lo = this.view.getUint32(this.pos, true);
    this.hi = this.view.getUint32(this.pos + 4, true);
    this.pos += 8;
  }

  float(): number {
    if (this.pos + 4 > this.end) this.fail("data ends inside a float");
    const v = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }

  double(): number {
    if (this.pos + 8 > this.end) this.fail("data ends inside a double");
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /** A length-delimited field's [start, end). */
  span(): [number, number] {
    const n = this.varint();
    if (this.hi || this.pos + n > this.end) this.fail("a length runs past its message");
    const start = this.pos;
    this.pos += n;
    return [start, this.pos];
  }

  skip(wire: number, field: number): void {
    switch (wire) {
      case Wire.Varint:
        this.varint();
        return;
      case Wire.I64:
        this.fixed64();
        return;
      case Wire.Len:
        this.span();
        return;
      case Wire.I32:
        this.fixed32();
        return;
      case Wire.StartGroup:
        for (;;) {
          const key = this.varint();
          if (this.hi) this.fail("field number out of range");
          if ((key & 7) === Wire.EndGroup) {
            if (key >>> 3 !== field) this.fail("a group ends with another group's tag");
            return;
          }
          this.skip(key & 7, key >>> 3);
        }
      default:
        this.fail(`wire type ${wire}`);
    }
  }
}

/** Unsigned 64-bit from lo/hi: a number when exact, else a BigInt. */
function u64(lo: number, hi: number): number | bigint {
  if (hi < 0x200000) return hi * TWO32 + lo;
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/** Signed 64-bit (two's complement) from lo/hi. */
function i64(lo: number, hi: number): number | bigint {
  return hi & 0x80000000 ? negative(~lo >>> 0, ~hi >>> 0) : u64(lo, hi);
}

/** -(value + 1) for the unsigned 64-bit value (lo, hi). */
function negative(lo: number, hi: number): number | bigint {
  const m = hi * TWO32 + lo + 1;
  if (hi < 0x200000 && m <= Number.MAX_SAFE_INTEGER) return -m;
  return -((BigInt(hi) << 32n) | BigInt(lo)) - 1n;
}

function zigzag64(lo: number, hi: number): number | bigint {
  const slo = ((lo >>> 1) | (hi << 31)) >>> 0;
  const shi = hi >>> 1;
  return lo & 1 ? negative(slo, shi) : u64(slo, shi);
}

/** The shortest decimal that is the same float32, as a JSON client sent it (0.1, not 0.100000001). */
function float32(v: number): number {
  for (let digits = 6; digits < 10; digits++) {
    const c = Number(v.toPrecision(digits));
    if (Math.fround(c) === v) return c;
  }
  return v;
}

interface Field {
  name: string;
  number: number;
  type: number;
  repeated: boolean;
  /** Explicit presence: left out of the value when not on the wire. */
  presence: boolean;
  /** Bit in the implicit-field mask (fields without presence, by number), or 0. */
  bit: number;
  message: MessageType | null;
  enumNames: Map<number, string> | null;
  /** For maps: the entry's key and value fields. */
  key: Field | null;
  value: Field | null;
}

interface MessageType {
  name: string;
  fields: Field[];
  byNumber: Map<number, Field>;
  /** Fields by number, for numbers below 64 (most fields): an array index, not a hash. */
  small: (Field | undefined)[];
  mapEntry: boolean;
}

// --- the schema, from a FileDescriptorSet ----------------------------------------------------

interface RawField {
  name: string;
  number: number;
  label: number;
  type: number;
  typeName: string;
  oneof: boolean;
}

function fields(r: Reader, start: number, end: number, each: (field: number, wire: number) => boolean): void {
  r.pos = start;
  const saved = r.end;
  r.end = end;
  while (r.pos < end) {
    const key = r.varint();
    const field = key >>> 3;
    const wire = key & 7;
    if (!each(field, wire)) r.skip(wire, field);
  }
  r.end = saved;
}

function text(r: Reader, span: [number, number]): string {
  return UTF8.decode(r.d.subarray(span[0], span[1]));
}

/** Message types by full name (".pkg.Name"), read from a serialized FileDescriptorSet. */
export class Schema {
  private readonly types = new Map<string, MessageType>();
  readonly root: MessageType;

  constructor(descriptorSet: Uint8Array, message: string) {
    const r = new Reader(descriptorSet);
    const raw = new Map<string, { fields: RawField[]; mapEntry: boolean; proto3: boolean }>();
    const enums = new Map<string, Map<number, string>>();
    const files: [number, number][] = [];
    fields(r, 0, descriptorSet.length, (f, w) => {
      if (f !== 1 || w !== Wire.Len) return false;
      files.push(r.span());
      return true;
    });
    for (const [fs, fe] of files) {
      let pkg = "";
      let syntax = "proto2";
      const messages: [number, number][] = [];
      const enumSpans: [number, number][] = [];
      fields(r, fs, fe, (f, w) => {
        if (w !== Wire.Len) return false;
        if (f === 2) pkg = text(r, r.span());
        else if (f === 4) messages.push(r.span());
        else if (f === 5) enumSpans.push(r.span());
        else if (f === 12) syntax = text(r, r.span());
        else return false;
        return true;
      });
      const scope = pkg ? `.${pkg}` : "";
      for (const e of enumSpans) this.readEnum(r, e, scope, enums);
      for (const m of messages) this.readMessage(r, m, scope, syntax === "proto3", raw, enums);
    }
    for (const [name, m] of raw) {
      this.types.set(name, { name: name.slice(1), fields: [], byNumber: new Map(), small: new Array(64).fill(undefined), mapEntry: m.mapEntry });
    }
    for (const [name, m] of raw) {
      const t = this.types.get(name)!;
      let bit = 0;
      for (const f of [...m.fields].sort((a, b) => a.number - b.number)) {
        const isMessage = f.type === T.Message || f.type === T.Group;
        const child = isMessage ? this.types.get(f.typeName) : undefined;
        if (isMessage && child === undefined) throw new DecodeError(`schema lacks message type ${f.typeName}`);
        const enumNames = f.type === T.Enum ? enums.get(f.typeName) : undefined;
        if (f.type === T.Enum && enumNames === undefined) throw new DecodeError(`schema lacks enum type ${f.typeName}`);
        const repeated = f.label === 3;
        const presence = !repeated && (isMessage || f.oneof || !m.proto3);
        const field: Field = {
          name: f.name,
          number: f.number,
          type: f.type,
          repeated,
          presence,
          bit: presence ? 0 : 2 ** bit++,
          message: child ?? null,
          enumNames: enumNames ?? null,
          key: null,
          value: null,
        };
        t.fields.push(field);
        t.byNumber.set(f.number, field);
        if (f.number < 64) t.small[f.number] = field;
      }
    }
    for (const t of this.types.values()) {
      for (const f of t.fields) {
        if (f.repeated && f.message?.mapEntry) {
          f.key = f.message.byNumber.get(1) ?? null;
          f.value = f.message.byNumber.get(2) ?? null;
          if (f.key === null || f.value === null) throw new DecodeError(`map entry ${f.message.name} lacks its key or value`);
        }
      }
    }
    const root = this.types.get(message.startsWith(".") ? message : `.${message}`);
    if (root === undefined) throw new DecodeError(`schema has no message ${message}`);
    this.root = root;
  }

  private readEnum(r: Reader, span: [number, number], scope: string, enums: Map<string, Map<number, string>>): void {
    let name = "";
    const values = new Map<number, string>();
    fields(r, span[0], span[1], (f, w) => {
      if (f === 1 && w === Wire.Len) name = text(r, r.span());
      else if (f === 2 && w === Wire.Len) {
        const [vs, ve] = r.span();
        const after = r.pos;
        let vname = "";
        let number = 0;
        fields(r, vs, ve, (g, x) => {
          if (g === 1 && x === Wire.Len) vname = text(r, r.span());
          else if (g === 2 && x === Wire.Varint) number = r.varint() | 0;
          else return false;
          return true;
        });
        r.pos = after;
        if (!values.has(number)) values.set(number, vname);
      } else return false;
      return true;
    });
    enums.set(`${scope}.${name}`, values);
  }

  private readMessage(
    r: Reader,
    span: [number, number],
    scope: string,
    proto3: boolean,
    raw: Map<string, { fields: RawField[]; mapEntry: boolean; proto3: boolean }>,
    enums: Map<string, Map<number, string>>,
  ): void {
    let name = "";
    let mapEntry = false;
    const fieldSpans: [number, number][] = [];
    const nested: [number, number][] = [];
    const nestedEnums: [number, number][] = [];
    fields(r, span[0], span[1], (f, w) => {
      if (w !== Wire.Len) return false;
      if (f === 1) name = text(r, r.span());
      else if (f === 2) fieldSpans.push(r.span());
      else if (f === 3) nested.push(r.span());
      else if (f === 4) nestedEnums.push(r.span());
      else if (f === 7) {
        const [os, oe] = r.span();
        const after = r.pos;
        fields(r, os, oe, (g, x) => {
          if (g === 7 && x === Wire.Varint) mapEntry = r.varint() !== 0;
          else return false;
          return true;
        });
        r.pos = after;
      } else return false;
      return true;
    });
    const full = `${scope}.${name}`;
    const out: RawField[] = [];
    for (const [s, e] of fieldSpans) {
      const f: RawField = { name: "", number: 0, label: 1, type: 0, typeName: "", oneof: false };
      fields(r, s, e, (g, x) => {
        if (g === 1 && x === Wire.Len) f.name = text(r, r.span());
        else if (g === 3 && x === Wire.Varint) f.number = r.varint();
        else if (g === 4 && x === Wire.Varint) f.label = r.varint();
        else if (g === 5 && x === Wire.Varint) f.type = r.varint();
        else if (g === 6 && x === Wire.Len) f.typeName = text(r, r.span());
        else if (g === 9 && x === Wire.Varint) {
          r.varint();
          f.oneof = true;
        } else return false;
        return true;
      });
      out.push(f);
    }
    raw.set(full, { fields: out, mapEntry, proto3 });
    for (const e of nestedEnums) this.readEnum(r, e, full, enums);
    for (const m of nested) this.readMessage(r, m, full, proto3, raw, enums);
  }

  /** Decode a serialization (with its presence record, if any) to a value. */
  decode(data: Uint8Array): Record<string, unknown> {
    const r = new Reader(data);
    let absent: Map<number, bigint> | null = null;
    if (data.length >= 3 && data[0] === 0xc2 && data[1] === 0xa3 && data[2] === 0x09) {
      r.pos = 3;
      absent = readPresence(r);
    }
    const value = readMessage(r, this.root, r.pos, data.length);
    if (absent !== null) applyPresence(this.root, value, absent, { next: 0 });
    return value;
  }
}

function readPresence(r: Reader): Map<number, bigint> {
  const [start, end] = r.span();
  r.pos = start;
  const absent = new Map<number, bigint>();
  while (r.pos < end) {
    const index = r.varint();
    if (r.pos >= end) r.fail("presence record ends inside a pair");
    let mask = 0n;
    let shift = 0n;
    for (;;) {
      if (r.pos >= end) r.fail("presence record ends inside a varint");
      const b = r.d[r.pos++];
      mask |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if (!(b & 0x80)) break;
    }
    absent.set(index, mask);
  }
  r.pos = 0;
  return absent;
}

function applyPresence(t: MessageType, value: Record<string, unknown>, absent: Map<number, bigint>, ctx: { next: number }): void {
  const mask = absent.get(ctx.next++) ?? 0n;
  for (const f of t.fields) {
    if (!f.presence && mask & BigInt(f.bit)) {
      delete value[f.name];
      continue;
    }
    const v = value[f.name];
    if (v === undefined || f.message === null) continue;
    if (f.key !== null) {
      if (f.value!.message === null) continue;
      const m = v as Record<string, unknown>;
      for (const k of Object.keys(m).sort(mapOrder(f.key.type))) {
        applyPresence(f.value!.message, m[k] as Record<string, unknown>, absent, ctx);
      }
    } else if (f.repeated) {
      for (const item of v as Record<string, unknown>[]) applyPresence(f.message, item, absent, ctx);
    } else {
      applyPresence(f.message, v as Record<string, unknown>, absent, ctx);
    }
  }
}

function mapOrder(keyType: number): (a: string, b: string) => number {
  if (keyType === T.String) return (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  if (keyType === T.Bool) return (a, b) => (a === b ? 0 : a === "false" ? -1 : 1);
  return (a, b) => {
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

function defaultValue(f: Field): unknown {
  if (f.repeated) return f.key !== null ? {} : [];
  switch (f.type) {
    case T.String:
      return "";
    case T.Bytes:
      return new Uint8Array(0);
    case T.Bool:
      return false;
    case T.Enum:
      return f.enumNames!.get(0) ?? 0;
    default:
      return 0;
  }
}

/** A string field: short ASCII text (most of an API's) without TextDecoder's call overhead. */
function utf8(r: Reader, s: number, e: number, f: Field): string {
  const d = r.d;
  if (e - s <= 32) {
    let text = "";
    let i = s;
    for (; i < e; i++) {
      const c = d[i];
      if (c >= 0x80) break;
      text += String.fromCharCode(c);
    }
    if (i === e) return text;
  }
  try {
    return UTF8.decode(d.subarray(s, e));
  } catch {
    return r.fail(`field ${f.name} is not UTF-8`);
  }
}

function scalar(r: Reader, f: Field, wire: number): unknown {
  switch (f.type) {
    case T.Double:
      if (wire !== Wire.I64) break;
      return r.double();
    case T.Float:
      if (wire !== Wire.I32) break;
      return float32(r.float());
    case T.Fixed32:
      if (wire !== Wire.I32) break;
      return r.fixed32();
    case T.Sfixed32:
      if (wire !== Wire.I32) break;
      return r.fixed32() | 0;
    case T.Fixed64:
      if (wire !== Wire.I64) break;
      r.fixed64();
      return u64(r.lo, r.hi);
    case T.Sfixed64:
      if (wire !== Wire.I64) break;
      r.fixed64();
      return i64(r.lo, r.hi);
    case T.String:
    case T.Bytes: {
      if (wire !== Wire.Len) break;
      const [s, e] = r.span();
      if (f.type === T.Bytes) return r.d.slice(s, e);
      return utf8(r, s, e, f);
    }
    default: {
      if (wire !== Wire.Varint) break;
      const lo = r.varint();
      switch (f.type) {
        case T.Int32:
          return lo | 0;
        case T.Uint32:
          return lo;
        case T.Sint32:
          return (lo >>> 1) ^ -(lo & 1);
        case T.Bool:
          return lo !== 0 || r.hi !== 0;
        case T.Enum: {
          const n = lo | 0;
          return f.enumNames!.get(n) ?? n;
        }
        case T.Int64:
          return i64(lo, r.hi);
        case T.Uint64:
          return u64(lo, r.hi);
        case T.Sint64:
          return zigzag64(lo, r.hi);
      }
    }
  }
  return r.fail(`field ${f.name} has wire type ${wire}`);
}

function readMessage(r: Reader, t: MessageType, start: number, end: number, into?: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = into ?? {};
  if (into === undefined) {
    for (const f of t.fields) if (!f.presence) out[f.name] = defaultValue(f);
  }
  r.pos = start;
  const outer = r.end;
  r.end = end;
  while (r.pos < end) {
    const key = r.varint();
    if (r.hi) r.fail("field number out of range");
    const number = key >>> 3;
    const wire = key & 7;
    if (number === 0) r.fail("field number 0");
    const f = number < 64 ? t.small[number] : t.byNumber.get(number);
    if (f === undefined) {
      r.skip(wire, number);
      continue;
    }
    if (f.message !== null) {
      if (wire !== Wire.Len) r.fail(`field ${f.name} has wire type ${wire}`);
      const [s, e] = r.span();
      if (f.key !== null) {
        const entry = readMessage(r, f.message, s, e);
        const v = f.value!;
        const k = entry[f.key.name] ?? defaultValue(f.key);
        (out[f.name] as Record<string, unknown>)[String(k)] = entry[v.name] ?? (v.message ? readMessage(r, v.message, e, e) : defaultValue(v));
      } else if (f.repeated) {
        (out[f.name] as unknown[]).push(readMessage(r, f.message, s, e));
      } else {
        const prior = out[f.name] as Record<string, unknown> | undefined;
        out[f.name] = readMessage(r, f.message, s, e, prior);
      }
      r.pos = e;
      continue;
    }
    if (f.repeated) {
      const list = out[f.name] as unknown[];
      if (wire === Wire.Len && f.type !== T.String && f.type !== T.Bytes) {
        const [s, e] = r.span();
        const after = r.pos;
        r.pos = s;
        const packed = f.type === T.Double || f.type === T.Fixed64 || f.type === T.Sfixed64 ? Wire.I64 : f.type === T.Float || f.type === T.Fixed32 || f.type === T.Sfixed32 ? Wire.I32 : Wire.Varint;
        r.end = e;
        while (r.pos < e) list.push(scalar(r, f, packed));
        r.end = end;
        r.pos = after;
      } else {
        list.push(scalar(r, f, wire));
      }
      continue;
    }
    out[f.name] = scalar(r, f, wire);
  }
  r.end = outer;
  return out;
}
