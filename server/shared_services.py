"""What every request shares, made once per app (server.app)."""

from dataclasses import dataclass

from request_limits import Budgets
from schema import Services
from server.persisted_queries import PersistedQueries


@dataclass(frozen=True)
class SharedServices:
    """What every request shares: budgets and persisted queries in Redis when configured (then
    shared by every process), and the caches of the GraphQL pipeline."""

    graphql: Services
    budgets: Budgets
    persisted: PersistedQueries
