"""How many exports this process streams at once: one per client, and a small total
(`ALMANAC_MAX_CONCURRENT_EXPORTS`). An export takes a slot before anything is counted or read,
and gives it back when its stream ends, however it ends."""

from dataclasses import dataclass, field

from api_errors import ApiError

RETRY_AFTER_SECONDS = 5
"""What a refused export is told to wait: about what streaming a large almanac takes."""


@dataclass
class ExportSlots:
    total: int
    running: set[str] = field(default_factory=set)
    """The clients (`key:<name>` or `address:<host>`) whose export is streaming."""

    def take(self, client: str) -> "ExportSlot":
        """A slot for `client`'s export; `ApiError` 429 if it has one streaming already, 503
        if `total` are streaming."""
        retry = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        if client in self.running:
            raise ApiError(
                "An export of yours is still streaming: one at a time per client.",
                status=429,
                headers=retry,
            )
        if len(self.running) >= self.total:
            raise ApiError(
                f"{self.total} exports are streaming already; try again shortly.",
                status=503,
                headers=retry,
            )
        self.running.add(client)
        return ExportSlot(self, client)


@dataclass
class ExportSlot:
    slots: ExportSlots
    client: str

    def release(self) -> None:
        self.slots.running.discard(self.client)
