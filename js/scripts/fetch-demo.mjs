// GET paths from a running server with the package's Client (tests/test_js.py), reporting each
// reply's status, form, fallback and canonical value as JSON on stdout:
//   node scripts/fetch-demo.mjs http://127.0.0.1:8000 /orders/3 /orders
// With --mangle-dictionaries, every dictionary file arrives with one byte changed (as a broken
// proxy would deliver it), so that none verifies.
import * as zeroc from "../dist/index.js";
import { canon } from "./canon.mjs";

const args = process.argv.slice(2);
const mangle = args.includes("--mangle-dictionaries");
const [base, ...paths] = args.filter((a) => !a.startsWith("--"));
const mangled = async (url, init) => {
  const response = await fetch(url, init);
  if (!String(url).endsWith(".zcd")) return response;
  const body = new Uint8Array(await response.arrayBuffer());
  body[body.length >> 1] ^= 1;
  return new Response(body, { status: response.status, headers: response.headers });
};
const client = new zeroc.Client({ baseUrl: base, fetch: mangle ? mangled : undefined });
const replies = [];
for (const path of paths) {
  const r = await client.get(path);
  replies.push({ path, status: r.status, form: r.form, fallback: r.fallback, value: canon(r.value) });
}
console.log(JSON.stringify({ replies, fallbacks: client.fallbacks }));
