// The public surface of the zeroc package: everything a front end imports comes from here.

export { crc32 } from "./crc32.js";
export { ACCEPT, Client } from "./client.js";
export type { ClientOptions, Reply } from "./client.js";
export { Decoder, DictionaryStore, SessionDecoder } from "./decoder.js";
export type { DecoderOptions } from "./decoder.js";
export { Dictionary } from "./dictionary.js";
export type { Serialization } from "./dictionary.js";
export {
  ChecksumMismatch,
  DecodeError,
  DictionaryError,
  DictionaryMismatch,
  InvalidDictionary,
  LimitExceeded,
  TruncatedFrame,
  UnknownDictionary,
  UnsupportedFrame,
  ZerocError,
} from "./errors.js";
export { parseJSON } from "./json.js";
export { Table, decodeBlock } from "./tabular.js";
export type { Column, ColumnOptions, TableLimits } from "./tabular.js";
export { ZstdDictionary, zstdDecompress } from "./zstd.js";
export type { ZstdOptions } from "./zstd.js";
