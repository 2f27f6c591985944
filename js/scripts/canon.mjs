// Values in a form Python can rebuild exactly (tests/test_js.py: canon): numbers by their
// float64 bits, BigInts by their digits, bytes as hex, objects as entry lists.

export function canon(v) {
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  if (typeof v === "number") {
    const b = Buffer.alloc(8);
    b.writeDoubleLE(v);
    return ["n", b.toString("hex")];
  }
  if (typeof v === "bigint") return ["i", v.toString()];
  if (v instanceof Uint8Array) return ["b", Buffer.from(v).toString("hex")];
  if (Array.isArray(v)) return ["a", v.map(canon)];
  return ["o", Object.entries(v).map(([k, x]) => [k, canon(x)])];
}
