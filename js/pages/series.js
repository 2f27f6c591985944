// The time-series page's logic (series.html): fetch a sensor's series as JSON + gzip, as a
// portable Zeroc table or as Arrow IPC, turn it into typed arrays and draw it. `load` reports
// the bytes on the wire and the time from request (and from response) to typed arrays.

import { Table } from "/js/index.js";

/** Fetch `/series/<form>?n=` and decode it: {form, n, wire, requestToArrays, responseToArrays, parse, t, v}. */
export async function load(form, n) {
  const url = new URL(`/series/${form}?n=${n}`, location.href).href;
  performance.clearResourceTimings();
  const start = performance.now();
  const response = await fetch(url, { cache: "no-store" });
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  let t = null;
  let v = null;
  let parse = null;
  let received;
  if (form === "json") {
    const text = await response.text();
    received = performance.now();
    const doc = JSON.parse(text);
    parse = performance.now() - received;
    const points = doc.points;
    t = new Float64Array(points.length);
    v = new Float64Array(points.length);
    for (let i = 0; i < points.length; i++) {
      t[i] = Date.parse(points[i].t);
      v[i] = points[i].v;
    }
  } else {
    const body = new Uint8Array(await response.arrayBuffer());
    received = performance.now();
    if (form === "zct") {
      const columns = Table.open(body).columns(0, undefined, { timestamps: true });
      t = columns.t;
      v = columns.v;
    } // Arrow IPC: bytes on the wire only (its JavaScript reader is not a dependency here)
  }
  const done = performance.now();
  const timing = performance.getEntriesByName(url).pop();
  return {
    form,
    n,
    wire: timing ? timing.encodedBodySize : null,
    decoded: timing ? timing.decodedBodySize : null,
    requestToArrays: done - start,
    responseToArrays: t === null ? null : done - received,
    parse,
    t,
    v,
  };
}

/** Draw the series: for each pixel column, the range of values that fall in it. */
export function draw(canvas, t, v, label) {
  const ctx = canvas.getContext("2d");
  const { width, height } = canvas;
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, width, height);
  const pad = 40;
  const w = width - 2 * pad;
  const h = height - 2 * pad;
  const t0 = t[0];
  const t1 = t[t.length - 1];
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < v.length; i++) {
    if (v[i] < lo) lo = v[i];
    if (v[i] > hi) hi = v[i];
  }
  const mins = new Float64Array(w).fill(Infinity);
  const maxs = new Float64Array(w).fill(-Infinity);
  for (let i = 0; i < t.length; i++) {
    const x = Math.min(w - 1, Math.floor(((t[i] - t0) / (t1 - t0 || 1)) * w));
    if (v[i] < mins[x]) mins[x] = v[i];
    if (v[i] > maxs[x]) maxs[x] = v[i];
  }
  const y = (value) => pad + h - ((value - lo) / (hi - lo || 1)) * h;
  ctx.strokeStyle = "#1f5fbf";
  ctx.beginPath();
  for (let x = 0; x < w; x++) {
    if (mins[x] === Infinity) continue;
    ctx.moveTo(pad + x + 0.5, y(mins[x]));
    ctx.lineTo(pad + x + 0.5, y(maxs[x]) - 0.5);
  }
  ctx.stroke();
  ctx.fillStyle = "#222";
  ctx.font = "14px sans-serif";
  ctx.fillText(label, pad, pad - 14);
  ctx.fillText(`${hi.toFixed(2)}`, 4, pad + 4);
  ctx.fillText(`${lo.toFixed(2)}`, 4, pad + h);
  ctx.fillText(new Date(t0).toISOString(), pad, height - 12);
  const end = new Date(t1).toISOString();
  ctx.fillText(end, width - pad - ctx.measureText(end).width, height - 12);
}
