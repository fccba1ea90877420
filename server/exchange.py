"""What the API learns of one HTTP request as it answers it, for whoever reports on it.

The view and the downloads fill it in (`begin_exchange`); the request log and the metrics read
it as the request ends (`exchange_of`). It is kept in the ASGI scope's state, which Starlette's
`request.state` reads and writes too. (Not in a context variable: every timer and task made
while a request runs copies its context, and would hold the record until it fires.)
"""

from dataclasses import dataclass

from starlette.types import Scope

from schema import Identity

KEY = "exchange"
"""Where the record is kept in the scope's state: the warm path reads and writes it there
itself (a call into this module is a step of its own on every request)."""


@dataclass
class Exchange:
    """One request's record: who sent it, what it ran, what it cost, how it ended."""

    media_type: str
    identity: Identity | None = None
    operation: str | None = None
    cost: int | None = None
    code: str | None = None
    """The first error's code, if it ended in one."""
    deadline: float | None = None
    timed_out: bool = False
    digest: str | None = None
    """Of the kept answer it got, if it got one: its ETag, known already."""
    reads: frozenset[str] | None = None
    """What the kept answer it got was computed from (store.subjects)."""


def begin_exchange(scope: Scope, media_type: str) -> Exchange:
    """A new record for the request (replacing any earlier one)."""
    exchange = Exchange(media_type)
    scope.setdefault("state", {})[KEY] = exchange
    return exchange


def exchange_of(scope: Scope) -> Exchange | None:
    """The request's record, if it is one the API answered as GraphQL or a download."""
    exchange = scope.get("state", {}).get(KEY)
    return exchange if isinstance(exchange, Exchange) else None
