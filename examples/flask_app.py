"""Flask with Zeroc. Run: python examples/flask_app.py (serves with waitress on port 8001)."""

from typing import Any

from flask import Flask, jsonify, request

import zeroc
from zeroc.http import Route, ZerocWSGIMiddleware
from zeroc.workloads import Order, generate

dictionary = zeroc.train(generate("order", 5000, seed=1), schema=Order)
orders = generate("order", 100, seed=2)

app = Flask(__name__)
app.json.sort_keys = False  # type: ignore[attr-defined]  # keep key order: a learned model learned it


@app.get("/orders/<int:i>")
def get_order(i: int) -> Any:
    return jsonify(orders[i % len(orders)])


@app.post("/orders/echo")  # a frame posted by the SDK arrives here as JSON
def echo() -> Any:
    return jsonify(request.get_json())


app.wsgi_app = ZerocWSGIMiddleware(app.wsgi_app, routes=[Route("/orders/*", dictionary)])  # type: ignore[method-assign]

if __name__ == "__main__":
    import waitress

    waitress.serve(app, host="127.0.0.1", port=8001)
