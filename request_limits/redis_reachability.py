"""Whether Redis answers, as one user of it last found: one warning when it fails, and one when
it is back, however many calls fail in between (budgets and subscription slots each keep one,
each falling back to counting in its own process meanwhile)."""

import logging
from collections.abc import Callable

from redis.exceptions import RedisError


class RedisReachability:
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
