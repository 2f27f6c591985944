// One error tree, named as the Python library's (spec/WIRE_FORMAT.md names them): code can
// test `instanceof DecodeError` for any malformed input, or a leaf for one cause.

/** Base of every error Zeroc raises. */
export class ZerocError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The frame is malformed: the sender's fault, never a bug on this side. */
export class DecodeError extends ZerocError {}

/** The frame or stream ends before its declared content. */
export class TruncatedFrame extends DecodeError {}

/** The frame's integrity check does not match its decoded content. */
export class ChecksumMismatch extends DecodeError {}

/** The frame uses a format version, method or flag this release does not implement. */
export class UnsupportedFrame extends DecodeError {}

/** A problem with a dictionary rather than with a frame. */
export class DictionaryError extends ZerocError {}

/** A frame names a dictionary that is not available here. */
export class UnknownDictionary extends DictionaryError {}

/** A frame names a different dictionary than the one the decoder holds. */
export class DictionaryMismatch extends DictionaryError {}

/** A dictionary file is corrupt, truncated, of an unknown version or fails its hash. */
export class InvalidDictionary extends DictionaryError {}

/** Decoding would exceed a configured limit (decoded size, window size). */
export class LimitExceeded extends ZerocError {}
