"""What requests share, kept in this process or, with Redis, for every process: one small
protocol (`Shared`) and its two places (`InProcess`, `InRedis`). Budgets, persisted queries and
subscriptions' slots each keep their state through it.

Each step on shared state is atomic and written twice (`Step`): as a Lua script Redis runs
whole, and as the same step in Python for this process. A user binds each of its steps once, to
where its state is kept (`Shared.bound`): in process, the bound step is the Python step itself
(a budget taken enters no other module); in Redis, the script runs; if Redis fails, one warning
says so (and one that it is back, however many steps fail in between: `RedisReachability`), and
the step gives what its user says to give meanwhile: by default the step in this process, so
the API stays up with its state here.
"""

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, ParamSpec, Protocol, TypeVar

from redis.asyncio import Redis
from redis.commands.core import AsyncScript
from redis.exceptions import RedisError

P = ParamSpec("P")
T = TypeVar("T")

Argument = str | bytes | int | float
"""What a script is given (a float as `repr` writes it, as redis-py encodes it)."""


@dataclass(frozen=True)
class Step(Generic[P, T]):
    """One atomic step on shared state, written for both places: in Redis, `lua` run whole on
    `keys(...)` with `args(...)`, its answer read by `read`; in this process, `here(...)`.
    While Redis fails it gives `down(...)` (by default `here`). Made and bound once per user
    (its `here` is the user's own state): a step taken builds nothing it does not use."""

    lua: str
    read: Callable[[Any], T]
    keys: Callable[P, Sequence[str]]
    args: Callable[P, Sequence[Argument]]
    here: Callable[P, Awaitable[T]]
    down: Callable[P, Awaitable[T]] | None = None


class Shared(Protocol):
    @property
    def everywhere(self) -> bool:
        """Whether every process shares the state (then what it holds for a process that dies
        must lapse by itself)."""

    def key(self, name: str) -> str:
        """The key `name` is kept under (Redis keys carry the configured prefix)."""

    def bound(self, step: Step[P, T]) -> Callable[P, Awaitable[T]]:
        """The step, taken where the state is kept whenever it is called."""

    async def close(self) -> None: ...


class InProcess:
    """State in this process: right for one process."""

    everywhere = False

    def key(self, name: str) -> str:
        return name

    def bound(self, step: Step[P, T]) -> Callable[P, Awaitable[T]]:
        return step.here

    async def close(self) -> None:
        pass


class RedisReachability:
    """Whether Redis answers, as one user of it last found: one warning when it fails, and one
    when it is back, however many calls fail in between."""

    def __init__(
        self,
        log: logging.Logger,
        *,
        down: str,
        back: str,
        report: Callable[[bool], None] = lambda reachable: None,
    ) -> None:
        self.log = log
        self.down = down  # what the process does meanwhile, after "Redis failed (error): "
        self.back = back  # after "Redis is back: "
        # Told whether Redis answers: at first (it is taken to), then at each change. At first
        # too, so that a gauge it sets says so of this user, not of one made before it.
        self.report = report
        self.reachable = True
        report(True)

    def failed(self, error: RedisError) -> None:
        if self.reachable:
            self.reachable = False
            self.log.warning("Redis failed (%s): %s", error, self.down)
            self.report(False)

    def answered(self) -> None:
        if not self.reachable:
            self.reachable = True
            self.log.warning("Redis is back: %s", self.back)
            self.report(True)


class InRedis:
    """State in Redis, shared by every process (several users may share one client)."""

    everywhere = True

    def __init__(
        self,
        redis: Redis,
        prefix: str,
        reachability: RedisReachability,
        on_failure: Callable[[], None] = lambda: None,
    ) -> None:
        self.redis = redis
        self.prefix = prefix
        self.reachability = reachability
        self.on_failure = on_failure  # each step that failed (a metric counts them)
        self._scripts: dict[str, AsyncScript] = {}

    def key(self, name: str) -> str:
        return self.prefix + name

    def bound(self, step: Step[P, T]) -> Callable[P, Awaitable[T]]:
        script = self._scripts.get(step.lua)
        if script is None:
            script = self._scripts[step.lua] = self.redis.register_script(step.lua)
        meanwhile = step.here if step.down is None else step.down

        async def taken(*args: P.args, **kwargs: P.kwargs) -> T:
            try:
                answer = await script(
                    keys=step.keys(*args, **kwargs), args=step.args(*args, **kwargs)
                )
            except RedisError as error:
                self.reachability.failed(error)
                self.on_failure()
                return await meanwhile(*args, **kwargs)
            self.reachability.answered()
            return step.read(answer)

        return taken

    async def close(self) -> None:
        await self.redis.aclose()
