"""The Zeroc SDK against a running demo: python examples/client.py [http://127.0.0.1:8000]."""

import sys

import httpx

from zeroc.http import Client

url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
try:
    with Client(url, cache_dir=".zeroc-cache") as client:
        first = client.get("/orders/1")  # fetches the route's dictionary once, then decodes
        again = client.get("/orders/2")
        echoed = client.post("/orders/echo", json=again.value)  # sent as a frame too
    gz = httpx.get(url + "/orders/2", headers={"accept-encoding": "gzip"})
except httpx.TransportError as exc:
    sys.exit(f"client: no demo at {url} ({exc}); start one with: zeroc serve-demo --port 8000")
print(
    f"order {again.value['order_id']}: {again.wire_bytes} B as {again.encoding}, "
    f"{gz.num_bytes_downloaded} B as gzip; echo round-trips: {echoed.value == again.value}"
)
