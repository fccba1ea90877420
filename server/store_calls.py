"""The store's calls, each wrapped on the instance (both stores alike): timed for the metrics,
traced for the spans. A call is wrapped once for each purpose, however many apps share a store."""

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from store import Store

Call = Callable[..., Awaitable[Any]]
# Not calls a request makes: the change stream lives as long as the process.
NOT_REQUEST_CALLS = frozenset({"follow_changes", "close"})


def wrap_store_calls(store: Store, purpose: str, wrap: Callable[[str, Call], Call]) -> None:
    """Replace each of `store`'s async methods by `wrap(name, method)`, unless already wrapped
    for `purpose`."""
    for name in dir(type(store)):
        if name.startswith("_") or name in NOT_REQUEST_CALLS:
            continue
        method = getattr(store, name, None)
        if not callable(method) or not inspect.iscoroutinefunction(method):
            continue
        purposes: frozenset[str] = getattr(method, "wrapped_for", frozenset())
        if purpose in purposes:
            continue
        wrapped = wrap(name, method)
        wrapped.wrapped_for = purposes | {purpose}  # type: ignore[attr-defined]
        setattr(store, name, wrapped)
