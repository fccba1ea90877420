"""What a webhook is sent: Standard Webhooks events, one per change of the log (or a test
ping), each with an id that stays the same on every attempt so receivers can drop repeats."""

import base64
import secrets
import time

import orjson

from store import (
    INTERNAL_KINDS,
    PUBLIC_KINDS,
    Change,
    ChangeFilter,
    ChangeKind,
    DeliveryDoc,
    WebhookDoc,
    encode_change_cursor,
)

CHANGE_CURSOR_HEADER = "almanac-change-cursor"
"""The header naming a change's cursor: of a change's delivery, and of a response to a request
that made one (server.min_change). Sent back as `Almanac-Min-Change`, it asks for the almanac
at least as fresh as that change."""
PING = "ping"
"""The kind of a test event (testWebhook): no change, only the endpoint's id."""
SECRET_BYTES = 32  # Standard Webhooks: between 24 and 64 bytes


def new_secret() -> str:
    """A signing secret in Standard Webhooks' form: `whsec_` and base64 of random bytes."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def new_webhook_id() -> str:
    return "wh_" + secrets.token_urlsafe(12)


def event_id(webhook_id: str, sequence: int) -> str:
    """The `webhook-id` of a change's event for one webhook: the same on every attempt."""
    return f"msg_{webhook_id}_{sequence}"


def change_filter(webhook: WebhookDoc) -> ChangeFilter:
    """Which changes of the log a webhook is sent: its kinds (never an internal one: API keys,
    site records), benchmarks, models and category."""
    kinds = PUBLIC_KINDS
    if webhook["kinds"] is not None:
        kinds = frozenset(map(ChangeKind, webhook["kinds"])) - INTERNAL_KINDS
    benchmarks, models = webhook["benchmarks"], webhook["models"]
    return ChangeFilter(
        kinds=kinds,
        benchmarks=None if benchmarks is None else frozenset(benchmarks),
        models=None if models is None else frozenset(models),
        category=webhook["category"],
    )


def change_body(change: Change) -> str:
    """The event of a change, as JSON: what the change feed says of it, with its cursor."""
    subject = None
    if change.collection is not None:
        subject = {"collection": change.collection, "slug": change.slug}
    return orjson.dumps(
        {
            "type": change.kind.value,
            "sequence": change.sequence,
            "cursor": encode_change_cursor(change.sequence),
            "at": change.at,
            "subject": subject,
            "revision": change.revision,
            "recordedBy": change.by,
        }
    ).decode()


def event_headers(sequence: int | None) -> dict[str, str]:
    """The headers of an event beyond Standard Webhooks': a change's cursor (a ping has none)."""
    return {} if sequence is None else {CHANGE_CURSOR_HEADER: encode_change_cursor(sequence)}


def ping_body(webhook_id: str, at: str, by: str) -> str:
    return orjson.dumps(
        {
            "type": PING,
            "sequence": None,
            "cursor": None,
            "at": at,
            "subject": None,
            "revision": None,
            "recordedBy": by,
            "webhook": webhook_id,
        }
    ).decode()


def new_delivery(
    webhook_id: str,
    delivery_id: str,
    *,
    sequence: int | None,
    kind: str,
    body: str,
    created_at: str,
    manual: bool,
) -> DeliveryDoc:
    """A delivery not yet attempted, due now."""
    now = time.time()
    return DeliveryDoc(
        id=delivery_id,
        webhook=webhook_id,
        sequence=sequence,
        kind=kind,
        body=body,
        status="pending",
        attempts=0,
        response_code=None,
        error=None,
        created_at=created_at,
        retry_since=now,
        next_attempt_at=now,
        manual=manual,
    )
