"""Seeded generators of the three benchmark workloads: Order, ProductView, SearchRequest.

They follow the original Zeroc benchmark's description of its data (REFERENCE.md section 1):
ids and timestamps drawn uniformly (20 and 21 bits), product ids from Zipf(alpha=1.2) over
10,000 products, a price fixed per product, a city that determines country and postal-code
prefix. The message classes generated from ``workloads.proto`` are exported with them.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from zeroc.workloads.workloads_pb2 import (
    Address,
    DeviceType,
    Item,
    Order,
    PaymentMethod,
    ProductView,
    SearchRequest,
)

__all__ = [
    "WORKLOADS",
    "Address",
    "DeviceType",
    "Item",
    "Order",
    "PaymentMethod",
    "ProductView",
    "SearchRequest",
    "entropy_bits",
    "entropy_floor",
    "generate",
]

N_PRODUCTS = 10_000
ZIPF_ALPHA = 1.2
USER_BITS = 20
TIME_BITS = 21
EPOCH = 1_700_000_000

CITIES = [
    ("Springfield", "US", "627"),
    ("Portland", "US", "972"),
    ("Austin", "US", "787"),
    ("Denver", "US", "802"),
    ("Boston", "US", "021"),
    ("Seattle", "US", "981"),
    ("Toronto", "CA", "M5V"),
    ("Vancouver", "CA", "V6B"),
    ("London", "GB", "EC1"),
    ("Manchester", "GB", "M1 "),
    ("Berlin", "DE", "101"),
    ("Munich", "DE", "803"),
    ("Paris", "FR", "750"),
    ("Lyon", "FR", "690"),
    ("Madrid", "ES", "280"),
    ("Rome", "IT", "001"),
]
STREETS = [
    "Main St",
    "Oak Ave",
    "Maple Dr",
    "Cedar Ln",
    "Park Rd",
    "Elm St",
    "Pine St",
    "Lake View",
    "Hill Rd",
    "River Rd",
    "Market St",
    "Church St",
    "High St",
    "Station Rd",
    "Mill Ln",
    "Bridge St",
]
PAYMENT_METHODS = ["CREDIT_CARD", "DEBIT_CARD", "PAYPAL", "APPLE_PAY", "GIFT_CARD"]
PAYMENT_WEIGHTS = [50, 20, 15, 10, 5]
REFERRERS = [
    "direct",
    "google.com",
    "bing.com",
    "facebook.com",
    "instagram.com",
    "newsletter",
    "twitter.com",
    "partner-site.com",
]
REFERRER_WEIGHTS = [30, 35, 5, 10, 8, 6, 4, 2]
DEVICES = ["MOBILE", "DESKTOP", "TABLET"]
DEVICE_WEIGHTS = [55, 38, 7]
VOCABULARY = [
    "wireless",
    "headphones",
    "running",
    "shoes",
    "laptop",
    "stand",
    "coffee",
    "maker",
    "organic",
    "tea",
    "phone",
    "case",
    "usb",
    "cable",
    "desk",
    "lamp",
    "water",
    "bottle",
    "yoga",
    "mat",
    "backpack",
    "kids",
    "toys",
    "gaming",
    "mouse",
    "keyboard",
    "mechanical",
    "winter",
    "jacket",
    "leather",
    "wallet",
    "smart",
    "watch",
    "camera",
    "lens",
    "tripod",
    "kitchen",
    "knife",
    "set",
    "bluetooth",
    "speaker",
    "charger",
    "portable",
    "monitor",
    "4k",
    "hdmi",
    "sofa",
    "cover",
    "garden",
    "hose",
    "dog",
    "food",
    "cat",
    "litter",
    "vitamin",
    "d3",
    "protein",
    "powder",
    "book",
    "novel",
    "pen",
]
FILTERS = [
    "in_stock",
    "free_shipping",
    "prime",
    "on_sale",
    "new",
    "rating_4_up",
    "brand:acme",
    "brand:globex",
    "price:0-25",
    "price:25-100",
    "price:100+",
    "color:black",
    "color:white",
    "size:m",
]
PAGE_SIZES = [10, 20, 50]
PAGE_WEIGHTS = [60, 20, 10, 6, 4]  # pages 1..5
FILTER_COUNT_WEIGHTS = [40, 30, 20, 10]  # 0..3 filters


def _zipf_cdf(n: int, alpha: float) -> list[float]:
    weights = [1.0 / (k**alpha) for k in range(1, n + 1)]
    total = sum(weights)
    return list(itertools.accumulate(w / total for w in weights))


_PRODUCT_CDF = _zipf_cdf(N_PRODUCTS, ZIPF_ALPHA)


class _Draw:
    """The random choices every workload is made of, from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        catalog = random.Random(0xC0FFEE)  # the catalogue is the same for every seed
        self.prices = [round(catalog.lognormvariate(3.0, 1.0) + 0.99, 2) for _ in range(N_PRODUCTS)]
        self.product_ids = catalog.sample(range(100_000, 1_000_000), N_PRODUCTS)

    def product(self) -> int:
        rank = bisect.bisect_left(_PRODUCT_CDF, self.rng.random())
        return min(rank, N_PRODUCTS - 1)

    def user(self) -> int:
        return self.rng.getrandbits(USER_BITS) + 1

    def timestamp(self) -> int:
        return EPOCH + self.rng.getrandbits(TIME_BITS)


def _order(d: _Draw) -> dict[str, Any]:
    rng = d.rng
    items = []
    for _ in range(rng.randint(1, 5)):
        p = d.product()
        items.append({"product_id": d.product_ids[p], "quantity": rng.randint(1, 5), "price": d.prices[p]})
    city, country, postal = rng.choice(CITIES)
    return {
        "order_id": f"ORD-{rng.randrange(10**7):07d}",
        "user_id": d.user(),
        "timestamp": d.timestamp(),
        "items": items,
        "shipping_address": {
            "street": f"{rng.randint(1, 999)} {rng.choice(STREETS)}",
            "city": city,
            "postal_code": f"{postal}{rng.randrange(100):02d}",
            "country": country,
        },
        "payment_method": rng.choices(PAYMENT_METHODS, PAYMENT_WEIGHTS)[0],
        "total_amount": round(sum(i["quantity"] * i["price"] for i in items), 2),
    }


def _product_view(d: _Draw) -> dict[str, Any]:
    rng = d.rng
    return {
        "user_id": d.user(),
        "product_id": d.product_ids[d.product()],
        "timestamp": d.timestamp(),
        "referrer": rng.choices(REFERRERS, REFERRER_WEIGHTS)[0],
        "device_type": rng.choices(DEVICES, DEVICE_WEIGHTS)[0],
    }


def _search_request(d: _Draw) -> dict[str, Any]:
    rng = d.rng
    return {
        "user_id": d.user(),
        "query": " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(1, 4))),
        "timestamp": d.timestamp(),
        "page": rng.choices(range(1, len(PAGE_WEIGHTS) + 1), PAGE_WEIGHTS)[0],
        "limit": rng.choice(PAGE_SIZES),
        "filters": rng.sample(
            FILTERS, rng.choices(range(len(FILTER_COUNT_WEIGHTS)), FILTER_COUNT_WEIGHTS)[0]
        ),
    }


WORKLOADS: dict[str, tuple[Callable[[_Draw], dict[str, Any]], type]] = {
    "order": (_order, Order),
    "product_view": (_product_view, ProductView),
    "search_request": (_search_request, SearchRequest),
}


def entropy_bits(weights: Sequence[float]) -> float:
    """Shannon entropy in bits of a discrete distribution given by (unnormalised) weights."""
    total = sum(weights)
    return -sum(w / total * math.log2(w / total) for w in weights if w > 0)


def _uniform(n: int) -> float:
    return math.log2(n)


def _ordered_sample(n: int, k_weights: Sequence[float]) -> float:
    """Entropy of rng.sample(population of n, k) with k drawn from k_weights (k = 0, 1, ...)."""
    total = sum(k_weights)
    h_k = entropy_bits(k_weights)
    return h_k + sum(w / total * math.log2(math.perm(n, k)) for k, w in enumerate(k_weights))


def entropy_floor(workload: str) -> float:
    """Information content of one message in bytes: the mean no lossless codec can beat.

    Every random choice the generator makes is recoverable from the message (ids, words and
    cities are distinct), so the message entropy is the sum of the choices' entropies; price
    (given product), country and postal prefix (given city) and the total are determined.
    """
    product = entropy_bits([p - q for p, q in zip(_PRODUCT_CDF, [0.0, *_PRODUCT_CDF[:-1]], strict=True)])
    if workload == "order":
        items = sum(k * (product + _uniform(5)) for k in range(1, 6)) / 5
        bits = (
            _uniform(10**7)
            + USER_BITS
            + TIME_BITS
            + _uniform(5)
            + items
            + _uniform(len(CITIES))
            + _uniform(999)
            + _uniform(len(STREETS))
            + _uniform(100)
            + entropy_bits(PAYMENT_WEIGHTS)
        )
    elif workload == "product_view":
        bits = USER_BITS + product + TIME_BITS + entropy_bits(REFERRER_WEIGHTS) + entropy_bits(DEVICE_WEIGHTS)
    elif workload == "search_request":
        words = sum(k * _uniform(len(VOCABULARY)) for k in range(1, 5)) / 4
        bits = (
            USER_BITS
            + _uniform(4)
            + words
            + TIME_BITS
            + entropy_bits(PAGE_WEIGHTS)
            + _uniform(len(PAGE_SIZES))
            + _ordered_sample(len(FILTERS), FILTER_COUNT_WEIGHTS)
        )
    else:
        raise ValueError(f"unknown workload {workload!r}; choose from {sorted(WORKLOADS)}")
    return bits / 8


def generate(workload: str, count: int, *, seed: int = 0) -> list[dict[str, Any]]:
    """Return ``count`` messages of ``workload`` as JSON-like dicts, the same for the same seed."""
    try:
        make = WORKLOADS[workload][0]
    except KeyError:
        raise ValueError(f"unknown workload {workload!r}; choose from {sorted(WORKLOADS)}") from None
    draw = _Draw(seed)
    return [make(draw) for _ in range(count)]


def iter_messages(workload: str, *, seed: int = 0) -> Iterator[dict[str, Any]]:
    """An endless seeded stream of ``workload`` messages."""
    make = WORKLOADS[workload][0]
    draw = _Draw(seed)
    while True:
        yield make(draw)
