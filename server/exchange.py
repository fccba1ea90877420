"""What the API learns of one HTTP request as it answers it, for whoever reports on it.

The view and the downloads fill it in (`begin_exchange`); the request log and the metrics read
it as the request ends (`EXCHANGE`). The layer that reports on each request (the request ids':
server.observability.logs) opens a slot for it as the request begins and closes it as it
ends; the record in it is the request task's own, so reading or writing it calls nothing.
"""

from contextvars import ContextVar
from dataclasses import dataclass

from schema import Identity


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


EXCHANGE: ContextVar[Exchange | None] = ContextVar("exchange", default=None)
"""The record of the request being answered (None: not one the API answered as GraphQL or a
download)."""


def begin_exchange(media_type: str) -> Exchange:
    """A new record for the request (replacing any earlier one)."""
    exchange = Exchange(media_type)
    EXCHANGE.set(exchange)
    return exchange
