"""What every request shares, made once per app (server.app)."""

from dataclasses import dataclass

from request_limits import Budgets
from schema import Services
from server.graphql.persisted import PersistedQueries
from server.graphql.subscriptions.slots import Slots


@dataclass(frozen=True)
class SharedServices:
    """What every request shares: budgets, persisted queries and subscriptions' slots in Redis
    when configured (then shared by every process), and the caches of the GraphQL pipeline."""

    graphql: Services
    budgets: Budgets
    persisted: PersistedQueries
    slots: Slots
