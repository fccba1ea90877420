"""What a request may ask for, checked before it runs: its document's shape, its cost, and
its client's budget of points, and the slots of a client's open subscriptions.

Other packages import from here, never from the modules inside (import-linter checks it)."""

from request_limits.bounded_cache import BoundedCache
from request_limits.budgets import (
    Allowance,
    BucketPolicy,
    Budgets,
    LocalBudgets,
    RedisBudgets,
    charged,
    cost_report,
    throttled_error,
)
from request_limits.cost import REFUSED_COST, ListSizes, query_cost
from request_limits.document import (
    DocumentLimits,
    FragmentCycles,
    held_bytes,
    limit_rules,
    nests_past,
    selected_operation,
    too_many_tokens,
)
from request_limits.shared import Argument, InProcess, InRedis, RedisReachability, Shared, Step
from request_limits.slots import AllTaken, LocalSlots, RedisSlots, Slots

__all__ = [
    "REFUSED_COST",
    "AllTaken",
    "Allowance",
    "Argument",
    "BoundedCache",
    "BucketPolicy",
    "Budgets",
    "DocumentLimits",
    "FragmentCycles",
    "InProcess",
    "InRedis",
    "ListSizes",
    "LocalBudgets",
    "LocalSlots",
    "RedisBudgets",
    "RedisReachability",
    "RedisSlots",
    "Shared",
    "Slots",
    "Step",
    "charged",
    "cost_report",
    "held_bytes",
    "limit_rules",
    "nests_past",
    "query_cost",
    "selected_operation",
    "throttled_error",
    "too_many_tokens",
]
