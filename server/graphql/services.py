"""What every GraphQL request shares, made once per app (server.services)."""

from dataclasses import dataclass

from request_limits import Budgets, Slots
from schema import Services
from server.graphql.persisted import PersistedQueries
from store import Store


@dataclass(frozen=True)
class SharedServices:
    """What every request shares: the store it reads (wrapped for the metrics and tracing
    configured), budgets, persisted queries and subscriptions' slots in Redis when configured
    (then shared by every process), and the caches of the GraphQL pipeline."""

    store: Store
    graphql: Services
    budgets: Budgets
    persisted: PersistedQueries
    slots: Slots
