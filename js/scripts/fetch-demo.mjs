// GET paths from a running server with the package's Client (tests/test_js.py), reporting each
// reply's status, form, fallback and canonical value as JSON on stdout:
//   node scripts/fetch-demo.mjs http://127.0.0.1:8000 /orders/3 /orders
import * as zeroc from "../dist/index.js";
import { canon } from "./canon.mjs";

const [base, ...paths] = process.argv.slice(2);
const client = new zeroc.Client({ baseUrl: base });
const replies = [];
for (const path of paths) {
  const r = await client.get(path);
  replies.push({ path, status: r.status, form: r.form, fallback: r.fallback, value: canon(r.value) });
}
console.log(JSON.stringify({ replies, fallbacks: client.fallbacks }));
