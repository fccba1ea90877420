"""Views of a store: the store, each call through the view watched (timed by method, a span if
the request is traced) and, for a request, its reads noted (the subjects of every read, so that
an answer computed from them is retired by exactly the changes that touch one of them).

One generic wrapper, not a method-by-method copy: what each method is (a read and its rule, a
write, a cursor, lifelong) is declared on its line of the interface (store.interface, through
store.reads). What watches is given, typed by the small protocols below, as library objects
(prometheus-client's histogram, OpenTelemetry's tracer), so a call through a view never leaves
the store for the server's code. A view of a view is one view over the store itself: a request
noting its reads through the server's timed store adds no layer.
"""

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from inspect import signature
from typing import Any, Protocol, cast

from store import subjects as s
from store.changes import DataVersion
from store.interface import Store
from store.reads import CALLS, READS, Call

Opened = Callable[[], AbstractContextManager[object]]
Noter = Callable[[tuple[Any, ...], dict[str, Any], Any], None]
"""Notes a read's subjects, from its arguments (by position, by name) and what it found."""
"""What a watched call runs within, made anew for each call."""


class Timing(Protocol):
    def time(self) -> AbstractContextManager[object]: ...


class Timer(Protocol):
    """A histogram of store calls labelled by method (prometheus-client's `Histogram`)."""

    def labels(self, *labelvalues: str) -> Timing: ...


class SpanContext(Protocol):
    @property
    def is_valid(self) -> bool: ...


class Span(Protocol):
    def get_span_context(self) -> SpanContext: ...


@dataclass(frozen=True)
class Tracing:
    """How to trace a call: `start` a span by name (made current), if the `current` span is
    a traced request's (OpenTelemetry's `start_as_current_span` and `get_current_span`)."""

    start: Callable[[str], AbstractContextManager[object]]
    current: Callable[[], Span]

    def span(self, name: str) -> AbstractContextManager[object]:
        if not self.current().get_span_context().is_valid:
            return nullcontext()  # not for a traced request
        return self.start(name)


class Watch:
    """How the calls through a view are watched: timed, traced, or both. Shared by the views
    of one app, each method's timing made once (prometheus-client's `labels` is slow)."""

    def __init__(self, timer: Timer | None = None, tracing: Tracing | None = None) -> None:
        self.timer = timer
        self.tracing = tracing
        self._opened: dict[str, Opened] = {}

    def joined(self, other: "Watch") -> "Watch":
        return Watch(other.timer or self.timer, other.tracing or self.tracing)

    def opened(self, method: str) -> Opened:
        if (found := self._opened.get(method)) is None:
            found = self._opened[method] = self._opener(method)
        return found

    def _opener(self, method: str) -> Opened:
        timed = None if self.timer is None else self.timer.labels(method).time
        tracing, name = self.tracing, f"store.{method}"
        if tracing is None:
            return timed or nullcontext
        if timed is None:
            return lambda: tracing.span(name)
        return lambda: _SpanAroundTiming(tracing.span(name), timed())


class _SpanAroundTiming(AbstractContextManager[object]):
    """A span around a timing."""

    def __init__(
        self, outer: AbstractContextManager[object], inner: AbstractContextManager[object]
    ) -> None:
        self.outer, self.inner = outer, inner

    def __enter__(self) -> object:
        self.outer.__enter__()
        return self.inner.__enter__()

    def __exit__(self, *exc: Any) -> None:
        try:
            self.inner.__exit__(*exc)
        finally:
            self.outer.__exit__(*exc)


class StoreView:
    """`inner`, each call watched by `watch` (if given), and the subjects of each read added
    to `read` (if given). Attributes that are no calls are `inner`'s own."""

    def __init__(self, inner: Store, watch: Watch | None, read: set[str] | None) -> None:
        self.inner = inner
        self.watch = watch
        self.read = read

    @property
    def version(self) -> DataVersion:  # read on every request: no __getattr__ lookup
        return self.inner.version

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.inner, name)
        if not callable(found):
            return found
        call = CALLS.get(name, Call.READ)  # a method not declared: a read without a rule
        if call is Call.LIFELONG or (call is Call.WRITE and self.watch is None):
            return found
        wrapped = self._cursor(name) if call is Call.CURSOR else self._call(name, call)
        self.__dict__[name] = wrapped  # made once a view: the next lookup finds it
        return wrapped

    def _noter(
        self, name: str, call: Call
    ) -> Callable[[tuple[Any, ...], dict[str, Any], Any], None] | None:
        read = self.read
        if read is None or call is not Call.READ:
            return None
        rule = READS.get(name)
        if rule is None:  # a read without a rule: anything may change its answer
            return lambda args, named, found: read.add(s.EVERYTHING)
        inner = self.inner

        def note(args: tuple[Any, ...], named: dict[str, Any], found: Any) -> None:
            if named:  # the rules read arguments by position
                bound = signature(getattr(inner, name)).bind(*args, **named)
                args = tuple(bound.arguments.values())
            read.update(rule(args, found))

        return note

    def _call(self, name: str, call: Call) -> Callable[..., Any]:
        inner, note = self.inner, self._noter(name, call)
        opened = None if self.watch is None else self.watch.opened(name)

        async def called(*args: Any, **named: Any) -> Any:
            if opened is None:
                found = await getattr(inner, name)(*args, **named)
            else:
                with opened():
                    found = await getattr(inner, name)(*args, **named)
            if note is not None:
                note(args, named, found)
            return found

        return called

    def _cursor(self, name: str) -> Callable[..., AsyncIterator[Any]]:
        """Each batch's round trip watched as a call of its own."""
        inner, read = self.inner, self.read
        opened = nullcontext if self.watch is None else self.watch.opened(name)

        async def batches(*args: Any, **named: Any) -> AsyncIterator[Any]:
            if read is not None:
                read.add(s.EVERYTHING)
            found = aiter(getattr(inner, name)(*args, **named))
            while True:
                with opened():
                    batch = await anext(found, None)
                if batch is None:
                    return
                yield batch

        return batches


def _view(store: Store, watch: Watch | None, read: set[str] | None) -> Store:
    if isinstance(store, StoreView):  # one view over the store itself
        if watch is not None and store.watch is not None:
            watch = store.watch.joined(watch)
        kept = store.read if read is None else read
        return cast(Store, StoreView(store.inner, watch or store.watch, kept))
    return cast(Store, StoreView(store, watch, read))


def watched(store: Store, watch: Watch) -> Store:
    """`store`, each call watched by `watch` too; `store` itself is left as it is."""
    return _view(store, watch, None)


def noting_reads(store: Store, read: set[str]) -> Store:
    """`store`, noting in `read` the subjects of every read made through it."""
    return _view(store, None, read)


def underlying(store: Store) -> Store:
    """The store itself beneath any view of it: what is kept for its documents is its own."""
    return store.inner if isinstance(store, StoreView) else store
