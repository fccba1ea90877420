"""Graceful shutdown. On SIGTERM (what Docker, Kubernetes and systemd send) the server drains:
for `shutdown_drain_seconds` it keeps serving while /readyz answers 503, so the load balancer
stops sending it traffic; then Uvicorn stops accepting connections and gives in-flight
requests `shutdown_timeout_seconds` to finish before cancelling them. A second SIGTERM, or a
Ctrl-C (SIGINT), skips the drain.

The drain wraps the SIGTERM handler that Uvicorn installed, from the app's start-up, so it works
the same in one process and in each of several workers (which Uvicorn starts itself)."""

import asyncio
import logging
import signal
import threading
from collections.abc import Callable
from types import FrameType

log = logging.getLogger("almanac")

Handler = Callable[[int, FrameType | None], object]


class Drain:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = False

    def install(self) -> Callable[[], None]:
        """Put the drain in front of the server's SIGTERM handler; returns its removal. Where
        no server handles SIGTERM (in tests, say), there is nothing to drain for."""
        stop = signal.getsignal(signal.SIGTERM)
        if threading.current_thread() is not threading.main_thread() or not callable(stop):
            return lambda: None
        loop = asyncio.get_running_loop()

        def on_sigterm(number: int, frame: FrameType | None) -> None:
            if self.started:
                stop(number, frame)
                return
            self.started = True
            log.warning(
                "SIGTERM: draining for %.1f s (/readyz answers 503), then in-flight requests "
                "finish; SIGTERM again to stop now",
                self.seconds,
            )
            loop.call_soon_threadsafe(loop.call_later, self.seconds, stop, number, None)

        signal.signal(signal.SIGTERM, on_sigterm)

        def remove() -> None:
            if signal.getsignal(signal.SIGTERM) is on_sigterm:
                signal.signal(signal.SIGTERM, stop)

        return remove
