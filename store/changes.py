"""Knowing when the stored data changed, so that answers computed from it can be reused."""

import asyncio
import logging
import time
from typing import Any

log = logging.getLogger("almanac.store")

RETRY_SECONDS = 5.0


class DataVersion:
    """A number that moves whenever the stored data changes; `None` while that is unknown.

    The embedded store only changes through this process, so it always knows. A MongoDB
    shared with other processes is known only while its change stream is followed.
    """

    def __init__(self, *, known: bool) -> None:
        self.known = known
        self._count = 0
        self.changed_at = time.monotonic()
        """When it last moved (the clock of `time.monotonic`)."""
        self.last_change: float | None = None
        """When it last moved for a change of the data (Unix time), not for a stream reopened."""

    @property
    def current(self) -> int | None:
        return self._count if self.known else None

    def bump(self, *, change: bool = True) -> None:
        self._count += 1
        self.changed_at = time.monotonic()
        if change:
            self.last_change = time.time()


async def follow_changes(db: Any, version: DataVersion) -> None:
    """Bump `version` on every change any process makes to the database, until cancelled.

    Uses a MongoDB change stream, which needs a replica set (Atlas is one). Without one the
    version stays unknown, and nothing computed from the data is reused.
    """
    while True:
        try:
            async with db.watch() as stream:
                version.known = True
                version.bump(change=False)  # Whatever changed before the stream opened.
                async for _change in stream:
                    version.bump()
        except asyncio.CancelledError:
            raise
        except Exception as error:
            version.known = False
            log.warning(
                "Cannot follow database changes (%s); answers are not reused until it can. "
                "Retrying in %.0f s.",
                error,
                RETRY_SECONDS,
            )
            await asyncio.sleep(RETRY_SECONDS)
