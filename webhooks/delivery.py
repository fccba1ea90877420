"""The delivery worker: sends each webhook the changes it asked for, signed, at least once.

The change log is the outbox: a change is logged in the write's own transaction, so nothing a
crash interrupts is lost. Each endpoint keeps its position (the last change delivered); a
worker that holds the endpoint's lease (one conditional update: exactly one process at a time,
and a lease not renewed is taken over once it expires) reads the log after that position, with
the endpoint's filter, and sends the changes in order: the next only once the previous was
delivered or given up. A failed attempt is retried with exponential backoff and full jitter;
past the retry period the endpoint is disabled with its reason (updateWebhook enables it), as
it is once the API key that made it is revoked (checked before each attempt).

Each attempt checks the URL's destination again and connects to the address checked
(webhooks.destinations), and has one deadline for all of it (resolving, connecting,
sending, reading the answer). Each endpoint is served by a task of its own: a slow receiver
holds up only its own deliveries.

Every process runs a worker (server.app's lifespan); at shutdown it starts nothing new, lets
the attempts in flight end (each within its deadline; what is left then is cancelled, to be
sent again) and gives its leases back, so another process continues at once. It also prunes
the deliveries done (delivered or given up) past their retention.
"""

import asyncio
import contextlib
import logging
import random
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

import httpx
from prometheus_client import Counter, Gauge
from standardwebhooks import Webhook

from store import Change, DeliveryDoc, Store, WebhookDoc
from webhooks.destinations import Destinations, Refused, Target
from webhooks.events import change_body, change_filter, event_headers, event_id, new_delivery

log = logging.getLogger("almanac.webhooks")

POLL_SECONDS = 0.5  # how often the log is read for new changes (as the change follower does)
BATCH = 100  # changes read from the log for an endpoint at a time
MAX_RESPONSE_BYTES = 4096  # of a receiver's answer: read, then let go
PRUNE_SECONDS = 600.0  # how often the deliveries past their retention are deleted
NO_ANSWER = "No answer: the connection failed or was cut."
"""Whatever went wrong below HTTP, in the same words: a delivery's error tells no one whether a
port is open, closed or filtered."""

DELIVERIES = Counter(
    "almanac_webhook_deliveries",
    "Webhook delivery attempts, by outcome: delivered, retried (failed, tried again later) or "
    "failed (given up).",
    ["outcome"],
)
LAG = Gauge(
    "almanac_webhook_lag_changes",
    "Changes logged after the furthest-behind enabled webhook's position.",
    multiprocess_mode="max",
)
DISABLED = Gauge(
    "almanac_webhooks_disabled",
    "Webhook endpoints disabled after failing past the retry period.",
    multiprocess_mode="max",
)


class WebhookSettings(Protocol):
    """What webhooks are configured with (server.settings.Settings holds these, among others)."""

    @property
    def webhook_retry_seconds(self) -> float: ...
    @property
    def webhook_backoff_seconds(self) -> float: ...
    @property
    def webhook_max_backoff_seconds(self) -> float: ...
    @property
    def webhook_timeout_seconds(self) -> float: ...
    @property
    def webhook_lease_seconds(self) -> float: ...
    @property
    def webhook_delivery_retention_seconds(self) -> float: ...
    @property
    def webhook_allow_http(self) -> bool: ...
    @property
    def webhook_allow_private(self) -> bool: ...


@dataclass(frozen=True)
class DeliveryPolicy:
    retry_seconds: float
    backoff_seconds: float
    max_backoff_seconds: float
    timeout_seconds: float
    lease_seconds: float
    retention_seconds: float
    destinations: Destinations

    @classmethod
    def of(cls, settings: WebhookSettings) -> "DeliveryPolicy":
        return cls(
            retry_seconds=settings.webhook_retry_seconds,
            backoff_seconds=settings.webhook_backoff_seconds,
            max_backoff_seconds=settings.webhook_max_backoff_seconds,
            timeout_seconds=settings.webhook_timeout_seconds,
            lease_seconds=settings.webhook_lease_seconds,
            retention_seconds=settings.webhook_delivery_retention_seconds,
            destinations=destinations_of(settings),
        )

    def delay(self, attempts: int) -> float:
        """Full jitter: a random wait up to the exponential backoff (AWS's recommendation)."""
        ceiling = min(self.max_backoff_seconds, self.backoff_seconds * 2 ** (attempts - 1))
        return random.uniform(0, ceiling)


def destinations_of(settings: WebhookSettings) -> Destinations:
    return Destinations(
        allow_http=settings.webhook_allow_http, allow_private=settings.webhook_allow_private
    )


class KeyRevoked(Exception):
    """The API key that made the endpoint is no longer in force: the endpoint was disabled."""


class DeliveryWorker:
    """This process's sender of webhook deliveries (`run` until `stop`)."""

    def __init__(self, store: Store, policy: DeliveryPolicy) -> None:
        self.store = store
        self.policy = policy
        self.holder = f"worker-{secrets.token_hex(6)}"
        self._stopping = asyncio.Event()
        self._held: dict[str, float] = {}  # the leases held: until when
        self._serving: dict[str, asyncio.Task[None]] = {}  # each endpoint's task in flight
        self._pruned_at = -PRUNE_SECONDS  # monotonic: the first round prunes
        self._client = httpx.AsyncClient(
            follow_redirects=False,  # a redirect is a failure: it could point anywhere
            timeout=None,  # each attempt has one deadline for all of it (`attempt`)
            # A connection is to an address checked for one host name: never reused for another.
            limits=httpx.Limits(max_keepalive_connections=0),
            trust_env=False,  # no proxy from the environment: the address checked is sent to
            headers={"user-agent": "BenchmarkAlmanac-Webhooks/1"},
        )

    async def run(self) -> None:
        while not self._stopping.is_set():
            try:
                if time.monotonic() - self._pruned_at >= PRUNE_SECONDS:
                    await self.prune()
                await self.round()
            except Exception:
                log.exception("Webhook deliveries failed this round; trying again")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), POLL_SECONDS)
        await self._finish()

    async def stop(self) -> None:
        """Start nothing new; `run` returns once the attempts in flight ended (each within its
        deadline); then `close` gives the leases back."""
        self._stopping.set()

    async def _finish(self) -> None:
        """Let the endpoints' tasks end, for at most one attempt's deadline (and a second for
        the writes after it); cancel what is left (its delivery is sent again)."""
        serving = list(self._serving.values())
        if not serving:
            return
        _, left = await asyncio.wait(serving, timeout=self.policy.timeout_seconds + 1)
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)

    async def close(self) -> None:
        for webhook_id in list(self._held):
            await self.store.update_webhook(webhook_id, {"lease_until": 0.0}, self.holder)
        self._held.clear()
        await self._client.aclose()

    async def prune(self) -> int:
        """Delete the deliveries done (delivered or given up) made before the retention; how
        many were."""
        self._pruned_at = time.monotonic()
        before = datetime.now(UTC) - timedelta(seconds=self.policy.retention_seconds)
        pruned = await self.store.prune_deliveries(before.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
        if pruned:
            log.info("Pruned %d webhook deliveries past their retention.", pruned)
        return pruned

    async def round(self) -> list[asyncio.Task[None]]:
        """Start serving each enabled endpoint that is not being served: each in a task of its
        own, which no other waits for. The tasks started."""
        endpoints = await self.store.webhooks()
        _, newest = await self.store.change_bounds()
        enabled = [endpoint for endpoint in endpoints if endpoint["enabled"]]
        DISABLED.set(len(endpoints) - len(enabled))
        LAG.set(max((newest - endpoint["position"] for endpoint in enabled), default=0))
        started = []
        for endpoint in enabled:
            if endpoint["id"] not in self._serving:
                task = asyncio.create_task(self._served(endpoint, newest))
                self._serving[endpoint["id"]] = task
                started.append(task)
        return started

    async def _served(self, endpoint: WebhookDoc, newest: int) -> None:
        try:
            await self.serve(endpoint, newest)
        except KeyRevoked:
            pass
        except Exception as error:  # one endpoint's failure holds up no other
            log.error("Webhook %s: deliveries failed: %r", endpoint["id"], error)
        finally:
            self._serving.pop(endpoint["id"], None)

    async def serve(self, endpoint: WebhookDoc, newest: int) -> None:
        """Send one endpoint's due deliveries, if this worker holds (or takes) its lease. With
        nothing to send, or the lease another's, nothing is written."""
        now = time.time()
        if endpoint["lease_holder"] not in (None, self.holder) and endpoint["lease_until"] > now:
            self._held.pop(endpoint["id"], None)
            return
        queued = [
            delivery
            for delivery in await self.store.deliveries(endpoint["id"], BATCH, "pending")
            if delivery["manual"] and (delivery["next_attempt_at"] or 0) <= now
        ]
        changes = await self.store.changes_after(
            endpoint["position"], BATCH, change_filter(endpoint)
        )
        if not queued and not changes:
            if (
                self.store.embedded
                and endpoint["position"] < newest
                and await self._lease(endpoint["id"])
            ):
                await self._passed(endpoint["id"], newest)
            return
        if not await self._lease(endpoint["id"]):
            return
        for delivery in queued:
            if self._stopping.is_set():
                return
            await self.attempt(endpoint, delivery)
        position = await self._send_in_order(endpoint, changes)
        whole = position is not None and len(changes) < BATCH
        if whole and self.store.embedded and position is not None and position < newest:
            await self._passed(endpoint["id"], newest)

    async def _passed(self, webhook_id: str, newest: int) -> None:
        """Nothing else up to `newest` is for this endpoint (SQLite numbers changes as it
        commits them, so none can appear below it): its position moves there, its lag to 0."""
        await self.store.update_webhook(webhook_id, {"position": newest}, self.holder)

    async def _send_in_order(self, endpoint: WebhookDoc, changes: Iterable[Change]) -> int | None:
        """Send each change after the previous was delivered; the position reached if all
        were (None if one is still to send)."""
        position = endpoint["position"]
        for change in changes:
            if self._stopping.is_set():
                return None
            delivery_id = event_id(endpoint["id"], change.sequence)
            delivery = await self.store.delivery(delivery_id)
            if delivery is None:
                delivery = new_delivery(
                    endpoint["id"],
                    delivery_id,
                    sequence=change.sequence,
                    kind=change.kind.value,
                    body=change_body(change),
                    created_at=change.at,
                    manual=False,
                )
            elif delivery["status"] == "failed":  # given up, then its endpoint enabled again
                delivery = {**delivery, "status": "pending", "retry_since": time.time()}
            if delivery["status"] == "pending":
                if (delivery["next_attempt_at"] or 0) > time.time():
                    return None
                if not await self._lease(endpoint["id"]):
                    return None
                if not await self.attempt(endpoint, delivery):
                    return None
            position = change.sequence
            if not await self.store.update_webhook(
                endpoint["id"], {"position": position}, self.holder
            ):
                return None  # the lease was lost: its new holder continues
        return position

    async def attempt(self, endpoint: WebhookDoc, delivery: DeliveryDoc) -> bool:
        """One attempt, recorded; True if delivered. The key that made the endpoint is checked
        first (KeyRevoked, the endpoint disabled, if it is no longer in force), then the
        destination, then it is sent: all of it within one deadline."""
        if not await self._owner_in_force(endpoint["owner"]):
            reason = (
                f"The API key {endpoint['owner']!r} that made it was revoked: nothing is sent "
                "for it. Make the webhook again with a key in force."
            )
            await self._disable(endpoint, reason)
            raise KeyRevoked
        timeout = self.policy.timeout_seconds
        try:
            async with asyncio.timeout(timeout):
                target = await self.policy.destinations.target(endpoint["url"])
                code, error = await self._post(target, endpoint, delivery)
        except Refused as refused:
            code, error = None, f"Not sent: {refused}"
        except TimeoutError:
            code, error = None, f"No answer within {timeout:g} s (the whole attempt's deadline)."
        now = time.time()
        attempts = delivery["attempts"] + 1
        delivered = code is not None and 200 <= code < 300
        done: DeliveryDoc = {
            **delivery,
            "attempts": attempts,
            "response_code": code,
            "error": None if delivered else error,
        }
        if delivered:
            done["status"], done["next_attempt_at"] = "delivered", None
            DELIVERIES.labels("delivered").inc()
        elif now - delivery["retry_since"] >= self.policy.retry_seconds:
            done["status"], done["next_attempt_at"] = "failed", None
            DELIVERIES.labels("failed").inc()
            if not delivery["manual"]:
                await self._disable(endpoint, self._given_up(done))
        else:
            done["next_attempt_at"] = now + self.policy.delay(attempts)
            DELIVERIES.labels("retried").inc()
        await self.store.save_delivery(done)
        return delivered

    async def _owner_in_force(self, owner: str) -> bool:
        """Whether the key called `owner` is in force (read at each attempt, so a key revoked
        by any process stops its webhooks in every one)."""
        keys = await self.store.api_keys()
        return any(key["name"] == owner and key["revoked_at"] is None for key in keys)

    def _given_up(self, delivery: DeliveryDoc) -> str:
        return (
            f"Deliveries failed for {self.policy.retry_seconds:g} s (event {delivery['id']}, "
            f"{delivery['attempts']} attempts; the last: {delivery['error']}). "
            "Fix the endpoint, then enable it with updateWebhook."
        )

    async def _disable(self, endpoint: WebhookDoc, reason: str) -> None:
        log.warning("Webhook %s disabled: %s", endpoint["id"], reason)
        fields = {"enabled": False, "disabled_reason": reason}
        await self.store.update_webhook(endpoint["id"], fields, self.holder)

    async def _post(
        self, target: Target, endpoint: WebhookDoc, delivery: DeliveryDoc
    ) -> tuple[int | None, str]:
        """Send the event, signed (Standard Webhooks), to the address checked; its status code
        (None if none came) and what went wrong."""
        at = datetime.now(UTC)
        headers = {
            "host": target.host,
            "content-type": "application/json",
            "webhook-id": delivery["id"],
            "webhook-timestamp": str(int(at.timestamp())),
            "webhook-signature": Webhook(endpoint["secret"]).sign(
                delivery["id"], at, delivery["body"]
            ),
            **event_headers(delivery["sequence"]),
        }
        try:
            async with self._client.stream(
                "POST",
                target.connect_url,
                content=delivery["body"].encode(),
                headers=headers,
                extensions=target.extensions,
            ) as response:
                read = 0
                async for chunk in response.aiter_raw():
                    read += len(chunk)
                    if read >= MAX_RESPONSE_BYTES:
                        break
                code = response.status_code
        except httpx.HTTPError:
            return None, NO_ANSWER
        if response.is_redirect:
            return code, f"Answered {code}, a redirect: redirects are not followed."
        return code, f"Answered {code}."

    async def _lease(self, webhook_id: str) -> bool:
        """Hold the endpoint's lease for a delivery: renewed once half of it has passed."""
        now = time.time()
        lease = self.policy.lease_seconds
        if self._held.get(webhook_id, 0.0) - now > lease / 2:
            return True
        if await self.store.take_webhook_lease(webhook_id, self.holder, now, now + lease):
            self._held[webhook_id] = now + lease
            return True
        self._held.pop(webhook_id, None)
        return False
