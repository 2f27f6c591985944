"""Real and realistic traffic for ``zeroc bench``: message sets split into training and test.

Real: four documents from simdjson's ``jsonexamples`` (``corpora/``: tweets, Jenkins jobs,
GitHub events, a tracker's patterns), each split into alternate halves. Realistic: API
operations built from botocore's service models (real API descriptions, objects whose keys are
member names) and users, orders and log records drawn with faker (optional keys, nested objects,
free text). Both packages are in the ``bench`` extra; nothing is downloaded at run time.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from importlib import resources
from typing import Any

import zstandard as zstd

Split = tuple[list[Any], list[Any]]


def _document(name: str) -> Any:
    data = resources.files("zeroc.bench").joinpath("corpora", f"{name}.json.zst").read_bytes()
    return json.loads(zstd.ZstdDecompressor().decompress(data))


def _halves(items: list[Any]) -> Split:
    return items[0::2], items[1::2]


def tweets(count: int) -> Split:
    return _halves(_document("twitter")["statuses"])


def jenkins_jobs(count: int) -> Split:
    return _halves(_document("apache_builds")["jobs"])


def github_events(count: int) -> Split:
    return _halves(_document("github_events"))


def tracker_patterns(count: int) -> Split:
    return _halves(_document("instruments")["patterns"])


def aws_operations(count: int) -> Split:
    """One record per operation of botocore's service models, in service order: the operation's
    HTTP binding, its input shape's members (a map from member name to shape reference), its
    output and its errors. Services alternate between training and test, as a new API would."""
    from botocore.loaders import Loader

    loader = Loader()
    train: list[Any] = []
    test: list[Any] = []
    for i, service in enumerate(sorted(loader.list_available_services("service-2"))):
        model = loader.load_service_model(service, "service-2")
        shapes = model.get("shapes", {})
        meta = model.get("metadata", {})
        side = train if i % 2 == 0 else test
        for name, op in sorted(model.get("operations", {}).items()):
            record: dict[str, Any] = {
                "service": meta.get("endpointPrefix", service),
                "protocol": meta.get("protocol"),
                "operation": name,
                "http": op.get("http", {}),
            }
            shape = op.get("input", {}).get("shape")
            if shape is not None:
                members = shapes.get(shape, {}).get("members", {})
                record["input"] = {
                    "shape": shape,
                    "members": {
                        k: {kk: vv for kk, vv in v.items() if kk != "documentation"}
                        for k, v in members.items()
                    },
                }
                required = shapes.get(shape, {}).get("required")
                if required:
                    record["input"]["required"] = required
            if "output" in op:
                record["output"] = op["output"].get("shape")
            errors = [e.get("shape") for e in op.get("errors", [])]
            if errors:
                record["errors"] = errors
            if op.get("deprecated"):
                record["deprecated"] = True
            side.append(json.loads(json.dumps(record)))  # plain dicts, as they arrive over the wire
        if len(train) >= count and len(test) >= count:
            break
    return train[:count], test[:count]


def _undocumented(member: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in member.items() if k != "documentation"}


# The generated records' dates end here, not at the time of the run, so that a seed gives the
# same records, and the same sizes, on any day.
EPOCH = datetime(2026, 12, 1)


def _faker(seed: int) -> Any:
    from faker import Faker

    fake = Faker(["en_US", "de_DE", "ja_JP"])
    fake.seed_instance(seed)
    return fake


def _drawn(count: int, seed: int, make: Callable[[Any, random.Random, int], dict[str, Any]]) -> Split:
    fake, rng = _faker(seed), random.Random(seed)
    items = [make(fake, rng, i) for i in range(2 * count)]
    return items[:count], items[count:]


def _user(fake: Any, rng: random.Random, i: int) -> dict[str, Any]:
    user: dict[str, Any] = {
        "id": 10_000 + i * 7 + rng.randrange(7),
        "username": fake.user_name(),
        "name": fake.name(),
        "email": fake.email(),
        "created_at": fake.date_time_between(EPOCH - timedelta(days=5 * 365), EPOCH).isoformat() + "Z",
        "active": rng.random() < 0.9,
        "roles": rng.sample(["admin", "editor", "viewer", "billing", "support"], rng.choice([1, 1, 1, 2, 3])),
    }
    profile: dict[str, Any] = {}
    if rng.random() < 0.6:
        profile["bio"] = fake.sentence(nb_words=rng.randrange(4, 14))
    if rng.random() < 0.3:
        profile["website"] = fake.url()
    if rng.random() < 0.7:
        profile["location"] = {"city": fake.city(), "country": fake.country_code()}
    if profile:
        user["profile"] = profile
    user["last_login"] = None
    if rng.random() < 0.8:
        user["last_login"] = fake.date_time_between(EPOCH - timedelta(days=30), EPOCH).isoformat() + "Z"
    return user


def _order(fake: Any, rng: random.Random, i: int) -> dict[str, Any]:
    items = [
        {
            "sku": f"SKU-{rng.randrange(1, 500):05d}",
            "name": fake.catch_phrase(),
            "qty": rng.choice([1, 1, 1, 2, 2, 3, 5]),
            "price": round(rng.uniform(2, 300), 2),
        }
        for _ in range(rng.choice([1, 1, 2, 2, 3, 4, 6]))
    ]
    order: dict[str, Any] = {
        "order_id": f"ORD-{1_000_000 + i}",
        "created": fake.date_time_between(EPOCH - timedelta(days=365), EPOCH).isoformat(),
        "customer": {"id": rng.randrange(1, 50_000), "name": fake.name(), "email": fake.email()},
        "items": items,
        "total": round(sum(x["qty"] * x["price"] for x in items), 2),
        "currency": rng.choice(["USD", "USD", "USD", "EUR", "JPY"]),
        "status": rng.choice(["paid", "paid", "shipped", "delivered", "refunded"]),
    }
    if rng.random() < 0.85:
        order["shipping"] = {
            "street": fake.street_address(),
            "city": fake.city(),
            "postcode": fake.postcode(),
            "country": fake.country_code(),
        }
    if rng.random() < 0.2:
        order["note"] = fake.sentence()
    if rng.random() < 0.1:
        order["coupon"] = fake.bothify("????-####").upper()
    return order


def _log(fake: Any, rng: random.Random, i: int) -> dict[str, Any]:
    status = rng.choices([200, 201, 204, 301, 400, 401, 404, 500, 503], [60, 8, 5, 2, 6, 4, 8, 4, 3])[0]
    record: dict[str, Any] = {
        "ts": f"2026-11-{1 + i // 4000:02d}T{(i // 160) % 24:02d}:{(i // 3) % 60:02d}:"
        f"{rng.randrange(60):02d}.{rng.randrange(1000):03d}Z",
        "level": "ERROR" if status >= 500 else "WARN" if status >= 400 else "INFO",
        "service": rng.choice(["api", "api", "auth", "billing", "search"]),
        "host": f"ip-10-0-{rng.randrange(4)}-{rng.randrange(1, 40)}",
        "method": rng.choice(["GET", "GET", "GET", "POST", "PUT", "DELETE"]),
        "path": fake.uri_path(),
        "status": status,
        "latency_ms": int(rng.lognormvariate(3, 1)),
        "request_id": fake.uuid4(),
    }
    if rng.random() < 0.7:
        record["user_id"] = rng.randrange(1, 50_000)
    if status >= 500:
        record["error"] = {
            "type": rng.choice(["TimeoutError", "ConnectionError", "KeyError"]),
            "msg": fake.sentence(),
        }
    elif rng.random() < 0.3:
        record["msg"] = fake.sentence()
    return record


def faker_users(count: int) -> Split:
    return _drawn(count, 1, _user)


def faker_orders(count: int) -> Split:
    return _drawn(count, 2, _order)


def faker_logs(count: int) -> Split:
    return _drawn(count, 3, _log)


# name -> (builder, description); the builder takes how many messages a side may have.
SETS: dict[str, tuple[Callable[[int], Split], str]] = {
    "tweets": (tweets, "twitter.json statuses: 50 + 50 tweets (nested user, entities, free text)"),
    "jenkins_jobs": (jenkins_jobs, "apache_builds.json jobs: 438 + 437 records (name, url, color)"),
    "github_events": (github_events, "github_events.json: 15 + 15 events of many types"),
    "tracker_patterns": (tracker_patterns, "instruments.json patterns: 120 + 120 (nested, numeric, sparse)"),
    "aws_operations": (aws_operations, "botocore service models: one record per API operation"),
    "faker_users": (faker_users, "faker users: optional profile, location, roles, nulls"),
    "faker_orders": (faker_orders, "faker orders: items, totals, optional shipping, note, coupon"),
    "faker_logs": (faker_logs, "faker request logs: levels, paths, latencies, optional errors"),
}
