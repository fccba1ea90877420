"""What the extensions share across requests (`Services`, built once per app by server.app), and
what they keep for one HTTP request (`Meter`, `Admitted`)."""

import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from graphql import ASTValidationRule, DocumentNode, GraphQLError, OperationDefinitionNode
from strawberry.types import ExecutionContext

from request_limits import Allowance, BoundedCache, DocumentLimits, held_bytes
from schema.caller import Identity
from schema.extensions.staleness import AnswerCache, Staleness
from schema.json import encode_json
from store import EVERYTHING, Store
from webhooks import Destinations

OperationKey = tuple[str, str | None, bytes]
"""What identifies an operation: its answer and its cost depend on nothing else."""


@dataclass
class KnownDocument:
    """What a document's text was found to be: parsed (or refused by the parser), and the errors
    of its validation under the rules it was last validated with."""

    parsed: DocumentNode | GraphQLError
    rules: tuple[type[ASTValidationRule], ...] = ()
    errors: list[GraphQLError] | None = None
    own: dict[str | None, bool] = field(default_factory=dict)
    """Which of its operations (by the name a request gives) answer with the caller's own
    (schema.caller.per_caller), each found once: one entry an operation the document holds."""

    def size(self) -> int:
        parsed = [self.parsed] if isinstance(self.parsed, GraphQLError) else self.parsed
        return held_bytes(parsed) + (held_bytes(self.errors) if self.errors else 0)


@dataclass(frozen=True, slots=True)
class Admitted:
    """An operation admitted before it runs (server.graphql.admission): its document as it was
    found (parsed once, for every request sending its text) and the operation the spec's
    GetOperation selects in it, selected once. The pipeline's hooks take both from here."""

    known: KnownDocument
    document: DocumentNode
    definition: OperationDefinitionNode


@dataclass(slots=True, eq=False)
class CachedAnswer:
    version: int  # the data's version (store.DataVersion) when its computation began
    data: bytes
    digest: str  # of `data` (schema.json.digest): its ETag, computed once
    operation_name: str | None  # of the operation answered (for the logs and metrics)
    reads: frozenset[str] = frozenset({EVERYTHING})
    """What its computation read (store.subjects): a change of any of these retires it."""
    reflects: int = 0
    """The change it reflects: `DataVersion.applied_through` when its computation began."""
    # Its freshness (schema.extensions.staleness.Watched), kept on it rather than in an entry
    # of its own: since when it is stale (None: it is not), how much and when it was asked for.
    stale_since: float | None = None
    asks: float = 1.0
    asked_at: float = 0.0

    def size(self) -> int:
        held = sys.getsizeof(self) + sys.getsizeof(self.data) + sys.getsizeof(self.digest)
        # Its read subjects are counted as its own, though kept answers share them (an upper
        # bound), and its freshness's time and key in the staleness index as measured.
        reads = sys.getsizeof(self.reads) + sum(map(sys.getsizeof, self.reads))
        return held + reads + WATCHED_BYTES


WATCHED_BYTES = 100
"""What an answer's freshness holds besides its slots: `asked_at` (a float, 24 bytes) and its key
in the staleness index's set (a set's slot is 16 bytes, its table a sixth to three fifths full:
tracemalloc, 5,000 answers of one query, 105 bytes a key)."""


@dataclass
class Services:
    """What the extensions share across requests (built once per app by server.app)."""

    document_limits: DocumentLimits
    documents: BoundedCache[str, KnownDocument]
    costs: BoundedCache[OperationKey, int]
    answers: AnswerCache[OperationKey, CachedAnswer] | None = None
    staleness: Staleness[OperationKey, CachedAnswer] = field(default_factory=Staleness)
    """When each kept answer went stale, and the queue of those to refresh."""
    webhook_destinations: Destinations = field(default_factory=Destinations)  # createWebhook's

    @classmethod
    def create(
        cls,
        document_limits: DocumentLimits,
        *,
        document_cache_bytes: int,
        cost_cache_bytes: int,
        answer_cache_bytes: int,
        webhook_destinations: Destinations | None = None,
    ) -> "Services":
        staleness: Staleness[OperationKey, CachedAnswer] = Staleness()
        answers: AnswerCache[OperationKey, CachedAnswer] | None = None
        if answer_cache_bytes:
            answers = AnswerCache(answer_cache_bytes, CachedAnswer.size, staleness)
        return cls(
            document_limits=document_limits,
            documents=BoundedCache(document_cache_bytes, KnownDocument.size),
            costs=BoundedCache(cost_cache_bytes, sys.getsizeof),
            answers=answers,
            staleness=staleness,
            webhook_destinations=webhook_destinations or Destinations(),
        )


class MeterMode(Enum):
    PAY = "pay"
    """Each operation pays its cost before it runs."""
    PRICE = "price"
    """Each operation is priced (checked and costed) but neither charged nor run."""
    PREPAID = "prepaid"
    """Each operation runs; the request paid for all of them already."""


Pricer = Callable[[DocumentNode, str | None, dict[str, Any] | None], int]
"""An operation's price: its document, operation name and variables → its cost in points."""


@dataclass
class Meter:
    """How the schema prices and pays for one HTTP request's operations: the interface this
    layer defines, made by the HTTP layer (server.charges, where every price is computed and
    every charge made). It keeps each operation's cost, in order, and what is left."""

    price: Pricer
    check: Callable[[int], None]
    """Refuses (`ApiError`) an operation that may not run at this cost."""
    pay: Callable[[int], Awaitable[Allowance]]
    minimum: int
    """What a priced request that runs nothing costs (`rateLimit(dryRun: true)`)."""
    mode: MeterMode = MeterMode.PAY
    costs: list[int] = field(default_factory=list)
    allowance: Allowance | None = None
    priced: int = 0
    """What the operation running costs (charged or not: see `rateLimit(dryRun:)`)."""

    async def charge(self, cost: int) -> Allowance:
        self.allowance = await self.pay(cost)
        return self.allowance


@dataclass(frozen=True, slots=True)
class Answered:
    """How fresh a query's answer is: the change it reflects (a change log sequence number), and
    for a stale answer, how long past the first change it misses (None: it is fresh)."""

    reflects: int
    stale_seconds: float | None = None


@dataclass(kw_only=True)
class OperationState:
    """What the extensions read and note of the operation running: their part of a request's
    context (schema.context.Context)."""

    store: Store  # noting in `read` what each read through it depends on (store.reads)
    identity: Identity | None = None
    # Both None when the schema is run directly (the CLI, tests): nothing checked or metered.
    services: Services | None = None
    meter: Meter | None = None
    # The operation running: its text, name and variables, as the HTTP request sent them.
    operation: OperationKey | None = None
    # Its document and the operation selected in it, as the gate admitted them (None when the
    # schema is run directly: DocumentChecks parses it then, and nothing is metered).
    admitted: Admitted | None = None
    # The subjects (store.subjects) of everything read through `store` so far.
    read: set[str] = field(default_factory=set)
    # Whether an operation answered with the caller's own (schema.caller.per_caller): never shared.
    own: bool = False
    # How fresh the query answered is (extensions.freshness); None until one is answered.
    answered: Answered | None = None


def state_of(execution_context: ExecutionContext) -> OperationState | None:
    """The almanac's state of the operation running (None if it was run with another context)."""
    context = execution_context.context
    return context if isinstance(context, OperationState) else None


def operation_key(
    text: str, operation_name: str | None, variables: dict[str, Any] | None
) -> OperationKey:
    return (text, operation_name, encode_json(variables or {}, sort_keys=True))
