"""FastAPI with Zeroc. Run: uvicorn examples.fastapi_app:app --port 8000 (or: zeroc serve-demo).

Responses are compressed for every client (zstd, br, gzip, dcz); on /orders/* clients of the
Zeroc SDK exchange ~56-byte protobuf frames instead of ~370-byte JSON.
"""

from typing import Any

from fastapi import FastAPI, Request
from prometheus_client import make_asgi_app

import zeroc
from zeroc.http import Metrics, Route, ZerocMiddleware
from zeroc.workloads import Order, generate

# In production, train once on real traffic (`zeroc train`) and load the file here.
dictionary = zeroc.train(generate("order", 5000, seed=1), schema=Order)
orders = generate("order", 100, seed=2)

app = FastAPI()


@app.get("/orders/{i}")
def get_order(i: int) -> dict[str, Any]:
    return orders[i % len(orders)]


@app.post("/orders/echo")  # a frame posted by the SDK arrives here as JSON
async def echo(request: Request) -> Any:
    return await request.json()


app.mount("/metrics", make_asgi_app())
app.add_middleware(ZerocMiddleware, routes=[Route("/orders/*", dictionary)], metrics=Metrics())  # type: ignore[arg-type]
