// A fetch() wrapper that negotiates as the Python SDK does (spec/HTTP.md §2-3): it asks for
// Zeroc frames, fetches a route's dictionary once (verified, then kept), decodes frames to
// values and falls back to JSON whenever a frame cannot be decoded. Content codings (zstd, br,
// gzip, dcz) are the browser's own business: fetch() undoes them before this code sees a byte.

import { Decoder } from "./decoder.js";
import { Dictionary } from "./dictionary.js";
import { InvalidDictionary, UnsupportedFrame, ZerocError } from "./errors.js";
import { parseJSON } from "./json.js";

export const ZEROC_MEDIA_TYPE = "application/x-zeroc";
export const JSON_MEDIA_TYPE = "application/json";
export const ACCEPT = `${ZEROC_MEDIA_TYPE}, ${JSON_MEDIA_TYPE};q=0.9`;
export const DICTIONARY_PATH = "/.well-known/zeroc/dictionaries/";
const DICTIONARIES = 32; // dictionaries kept, the least recently used dropped first
const ROUTES = 1000; // routes (or paths, where the server names no pattern) whose dictionary is known

export interface ClientOptions {
  /** Resolves relative paths (default: the page's location). */
  baseUrl?: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Largest decoded message (default 64 MiB). */
  maxDecodedSize?: number;
}

export interface Reply {
  status: number;
  /** The JSON value: decoded from a frame, or parsed from JSON. */
  value: unknown;
  /** How the body came: "zeroc" (a frame) or "json". */
  form: "zeroc" | "json";
  /** Whether this reply came from a second request for plain JSON. */
  fallback: boolean;
  /** The body's bytes as fetch() gave them (content coding undone). */
  body: Uint8Array;
  headers: Headers;
}

function mediaType(header: string | null): [string, Map<string, string>] {
  const [kind, ...rest] = (header ?? "").split(";");
  const params = new Map<string, string>();
  for (const p of rest) {
    const i = p.indexOf("=");
    if (i < 0) continue;
    params.set(p.slice(0, i).trim().toLowerCase(), p.slice(i + 1).trim().replace(/^"(.*)"$/, "$1"));
  }
  return [kind.trim().toLowerCase(), params];
}

/** Fetches JSON APIs as Zeroc frames where the server offers them. */
export class Client {
  /** Requests answered by the second, plain-JSON try. */
  fallbacks = 0;
  private readonly base: string | undefined;
  private readonly fetcher: typeof fetch;
  private readonly maxDecodedSize: number;
  private readonly decoders = new Map<string, Promise<Decoder | null>>();
  /** Route pattern (or path) to the dictionary the server named for it, oldest first. */
  private readonly routes = new Map<string, [RegExp, string]>();
  /** Dictionaries whose frames cannot be had here (fetch failed, or frames of an unsupported method). */
  private readonly unusable = new Set<string>();

  constructor(options: ClientOptions = {}) {
    this.base = options.baseUrl ?? globalThis.location?.href;
    this.fetcher = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.maxDecodedSize = options.maxDecodedSize ?? 64 * 1024 * 1024;
  }

  get(path: string, init: RequestInit = {}): Promise<Reply> {
    return this.request(path, { ...init, method: "GET" });
  }

  /** POST `value` as JSON (this package decodes; it does not encode frames). */
  post(path: string, value: unknown, init: RequestInit = {}): Promise<Reply> {
    const headers = new Headers(init.headers);
    headers.set("content-type", JSON_MEDIA_TYPE);
    return this.request(path, { ...init, method: "POST", headers, body: JSON.stringify(value) });
  }

  async request(path: string, init: RequestInit = {}): Promise<Reply> {
    const known = this.dictionaryFor(new URL(this.url(path), "http://x").pathname);
    const skip = known !== null && this.unusable.has(known); // ask for JSON at once
    for (const plain of skip ? [true] : [false, true]) {
      const headers = new Headers(init.headers);
      headers.set("accept", plain ? JSON_MEDIA_TYPE : ACCEPT);
      const response = await this.fetcher(this.url(path), { ...init, headers });
      this.learn(new URL(response.url || this.url(path), "http://x").pathname, response.headers);
      const body = new Uint8Array(await response.arrayBuffer());
      const [kind, params] = mediaType(response.headers.get("content-type"));
      const reply = { status: response.status, body, headers: response.headers, fallback: plain };
      if (kind !== ZEROC_MEDIA_TYPE) {
        const isJSON = kind === JSON_MEDIA_TYPE || kind.endsWith("+json");
        return { ...reply, value: isJSON && body.length ? parseJSON(body) : null, form: "json" };
      }
      const id = (params.get("dictionary") ?? "").toLowerCase();
      const decoder = await this.decoder(id);
      if (decoder !== null) {
        try {
          return { ...reply, value: decoder.decode(body), form: "zeroc" };
        } catch (e) {
          if (!(e instanceof ZerocError)) throw e;
          if (e instanceof UnsupportedFrame) this.unusable.add(id); // learned frames, for now
        }
      } else {
        this.unusable.add(id);
      }
      this.fallbacks++;
    }
    throw new InvalidDictionary(`${path}: the response could not be decoded even as plain JSON`);
  }

  /** Remember which dictionary a route uses, by the pattern the server names (spec/HTTP.md §2). */
  private learn(path: string, headers: Headers): void {
    const id = headers.get("zeroc-dictionary")?.toLowerCase();
    if (!id || id.length !== 64) return;
    const key = headers.get("zeroc-route") ?? path;
    const pattern = new RegExp(`^${key.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
    this.routes.delete(key);
    this.routes.set(key, [pattern, id]);
    if (this.routes.size > ROUTES) this.routes.delete(this.routes.keys().next().value!);
  }

  private dictionaryFor(path: string): string | null {
    for (const [pattern, id] of this.routes.values()) if (pattern.test(path)) return id;
    return null;
  }

  /** The decoder for dictionary `id`, fetched and verified once; null when that fails. */
  private decoder(id: string): Promise<Decoder | null> {
    let d = this.decoders.get(id);
    if (d === undefined) {
      d = this.fetchDictionary(id);
      if (this.decoders.size >= DICTIONARIES) this.decoders.delete(this.decoders.keys().next().value!);
    } else {
      this.decoders.delete(id);
    }
    this.decoders.set(id, d);
    return d;
  }

  private async fetchDictionary(id: string): Promise<Decoder | null> {
    if (!/^[0-9a-f]{64}$/.test(id)) return null;
    try {
      const r = await this.fetcher(this.url(`${DICTIONARY_PATH}${id}.zcd`));
      if (r.status !== 200) return null;
      const d = await Dictionary.fromBytes(new Uint8Array(await r.arrayBuffer()));
      return d.id === id ? new Decoder(d, { maxDecodedSize: this.maxDecodedSize }) : null;
    } catch (e) {
      if (e instanceof ZerocError || e instanceof TypeError) return null; // TypeError: the network
      throw e;
    }
  }

  private url(path: string): string {
    return this.base === undefined ? path : new URL(path, this.base).href;
  }
}
