"""The kinds of request bench/pay_before_work.py sends: each refusal it measures (what is sent,
by whom, and the answer it must get), and the `{ __typename }` baseline they are compared with."""

import json
from dataclasses import dataclass
from enum import Enum
from typing import Any

import httpx

MAX_QUERY_COST = 5000  # the default; the anonymous bucket holds as much, as it must
EMPTY_RESTORE_RATE = "0.000000001"  # points a second: an emptied bucket stays empty
TINY = "{ __typename }"
# The issue's own: 102,010,201 points, far over any maximum.
OVER_COST = (
    "query Big { benchmarks(first: 100) { nodes { slug leaderboard(first: 10000) { score } "
    "scoresOverTime(last: 10000) { score } siblings(first: 100) { nodes { "
    "leaderboard(first: 10000) { score } } } } } }"
)
# Within the maximum, and real work if it ran: 40 leaderboards of 100 rows.
BIG = "{ benchmarks(first: 40) { nodes { slug leaderboard(first: 100) { modelName score } } } }"
SYNTAX_ERROR = "{ benchmarks(first: 10) { nodes { slug } }"
DOWNLOAD = "/benchmarks/synthetic-benchmark-1.csv"  # a leaderboard of 100 rows
OVER_COST_SUBSCRIPTION = "subscription { changes { read { added(first: 10000) { modelName } } } }"
EVENTS = "text/event-stream"
WEBSOCKET = "WS"  # a Kind's method: a graphql-transport-ws `subscribe` of its body's query
# Anonymous clients are told apart by X-Forwarded-For, believed from 127.0.0.1 by default (the
# reverse proxy's setting): each batch may have a budget of its own.
EMPTIED = "10.255.255.254"


class Sender(Enum):
    """Whose budget a request is charged to."""

    FRESH = "an address of its own for each batch, its bucket full"
    EMPTIED = "the address whose bucket was emptied"
    KEY = "the API key whose budget refuses nothing"


@dataclass(frozen=True)
class Kind:
    """One kind of request: what is sent, by whom, and the answer it must get."""

    name: str
    method: str
    path: str
    body: bytes | None
    sender: Sender
    status: int
    code: str | None  # the first error's `extensions.code`; None: an answer without errors
    accept: str = "application/graphql-response+json"  # a request error is then a 400

    def mismatch(self, response: httpx.Response) -> str | None:
        """Why this answer is not the one meant, if it is not."""
        got = f"{response.status_code} {response.text[:200]!r}"
        if response.status_code != self.status:
            return got
        try:
            answer = response.json()
        except ValueError:
            return got
        errors = answer.get("errors") if isinstance(answer, dict) else None
        if self.code is None:
            return got if errors or not answer.get("data") else None
        if not errors or errors[0].get("extensions", {}).get("code") != self.code:
            return got
        return None

    def refused_over_websocket(self, message: dict[str, Any]) -> str | None:
        """Why this WebSocket message is not the refusal meant, if it is not."""
        payload = message.get("payload")
        code = payload[0].get("extensions", {}).get("code") if isinstance(payload, list) else None
        return None if message.get("type") == "error" and code == self.code else str(message)


def graphql(query: str) -> bytes:
    return json.dumps({"query": query}).encode()


def post(name: str, body: bytes, sender: Sender, status: int, code: str | None) -> Kind:
    return Kind(name, "POST", "/graphql", body, sender, status, code)


def get(path: str, sender: Sender, status: int, code: str | None) -> Kind:
    return Kind(f"`{path}` over budget", "GET", path, None, sender, status, code)


def over_sse(name: str, query: str, code: str) -> Kind:
    return Kind(name, "POST", "/graphql", graphql(query), Sender.FRESH, 400, code, EVENTS)


def over_websocket(name: str, query: str, code: str) -> Kind:
    return Kind(name, WEBSOCKET, "/graphql", query.encode(), Sender.FRESH, 0, code)


BASELINE = post("`{ __typename }`", graphql(TINY), Sender.FRESH, 200, None)
KINDS = (
    BASELINE,
    post("over cost", graphql(OVER_COST), Sender.FRESH, 400, "MAX_COST_EXCEEDED"),
    post("over budget (a big query)", graphql(BIG), Sender.EMPTIED, 429, "THROTTLED"),
    post("malformed JSON", b'{"query": "{ __typ', Sender.FRESH, 400, "BAD_REQUEST"),
    post("GraphQL syntax error", graphql(SYNTAX_ERROR), Sender.FRESH, 400, "GRAPHQL_PARSE_FAILED"),
    post(
        "two operations, no operationName",
        graphql(f"{OVER_COST} query Small {TINY}"),
        Sender.FRESH,
        400,
        "BAD_REQUEST",
    ),
    get(DOWNLOAD, Sender.EMPTIED, 429, "THROTTLED"),
    get("/export.ndjson", Sender.EMPTIED, 429, "THROTTLED"),
    over_sse("a query over SSE", BIG, "BAD_REQUEST"),
    over_sse("a syntax error over SSE", SYNTAX_ERROR, "GRAPHQL_PARSE_FAILED"),
    over_websocket("a query over a WebSocket", BIG, "BAD_REQUEST"),
    over_websocket("a syntax error over a WebSocket", SYNTAX_ERROR, "GRAPHQL_PARSE_FAILED"),
    over_websocket(
        "a subscription over cost, over a WebSocket", OVER_COST_SUBSCRIPTION, "MAX_COST_EXCEEDED"
    ),
    # For reference, no bar: what a key's lookup adds to a request.
    post("`{ __typename }` with an API key", graphql(TINY), Sender.KEY, 200, None),
)
