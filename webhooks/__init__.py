"""Webhooks: what a partner's endpoint is sent (events), where it may be sent (destinations),
and the worker that sends it (delivery). Below schema/ (whose webhook mutations use it) and
above store/ (the change log is the outbox): sending needs no GraphQL.

Other packages import from here, never from the modules inside (import-linter checks it)."""

from webhooks.delivery import DeliveryPolicy, DeliveryWorker, WebhookSettings, destinations_of
from webhooks.destinations import Destinations, Refused, Target
from webhooks.events import (
    CHANGE_CURSOR_HEADER,
    PING,
    change_body,
    change_filter,
    event_id,
    new_delivery,
    new_secret,
    new_webhook_id,
    ping_body,
)

__all__ = [
    "CHANGE_CURSOR_HEADER",
    "PING",
    "DeliveryPolicy",
    "DeliveryWorker",
    "Destinations",
    "Refused",
    "Target",
    "WebhookSettings",
    "change_body",
    "change_filter",
    "destinations_of",
    "event_id",
    "new_delivery",
    "new_secret",
    "new_webhook_id",
    "ping_body",
]
