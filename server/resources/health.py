"""The health checks: /healthz (the process serves) and /readyz (the database answers and the
process is not shutting down), for a load balancer and an orchestrator."""

import asyncio
import logging
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import JSONResponse

from store import Store

log = logging.getLogger("almanac")

READY_TIMEOUT_SECONDS = 2.0


async def healthz(request: Request) -> JSONResponse:
    """The process is alive and serving."""
    return JSONResponse({"status": "ok"})


class Readiness:
    """/readyz: a load balancer should send traffic here only while both hold. `draining`
    tells whether the process has begun to shut down (server.transport.shutdown)."""

    def __init__(self, store: Store, draining: Callable[[], bool]) -> None:
        self.store = store
        self.draining = draining

    async def endpoint(self, request: Request) -> JSONResponse:
        if self.draining():
            return JSONResponse(
                {"status": "unavailable", "reason": "shutting down"},
                status_code=503,
                headers={"connection": "close"},
            )
        try:
            await asyncio.wait_for(self.store.ping(), READY_TIMEOUT_SECONDS)
        except Exception as error:
            log.warning("Not ready: the database did not answer a ping: %s", error)
            return JSONResponse(
                {"status": "unavailable", "reason": "the database did not answer"},
                status_code=503,
            )
        return JSONResponse({"status": "ready"})
