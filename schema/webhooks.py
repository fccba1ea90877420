"""Webhooks: a partner's endpoints, sent each change of the almanac they ask for, signed by the
Standard Webhooks specification (webhooks.DeliveryWorker sends them). Any API key manages its own
webhooks, a read key too; an admin key sees and manages every one."""

import time
from datetime import UTC, datetime
from enum import Enum
from typing import Annotated, Any

import strawberry

from api_errors import ApiError, ErrorCode, shown
from editing import InvalidInput, control_character
from schema.caller import Identity
from schema.context import Context
from schema.types import ChangeKind
from schema.vocabulary import (
    MAX_PAGE_SIZE,
    WRITE,
    Connection,
    connection,
    page,
    page_of,
    slice_size,
    sliced_by,
)
from store import PUBLIC_KINDS, DateTime, DeliveryDoc, WebhookDoc, encode_change_cursor
from store import ChangeKind as StoreChangeKind
from webhooks import PING, Destinations, new_delivery, new_secret, new_webhook_id, ping_body

MAX_WEBHOOKS_PER_KEY = 20
MAX_FILTER_SLUGS = 100
MAX_DESCRIPTION = 500

DryRun = Annotated[
    bool,
    strawberry.argument(
        description="Check the request and answer with what it would make, writing nothing: "
        "the same refusals, no change kept, no event sent (a secret shown is not kept)."
    ),
]


@strawberry.enum(description="Where a webhook delivery stands.")
class WebhookDeliveryStatus(Enum):
    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


@strawberry.input(description="Which changes a webhook is sent; every condition given narrows.")
class WebhookFilterInput:
    benchmarks: list[str] | None = strawberry.field(
        default=None, description="Only changes of these benchmarks (slugs)."
    )
    models: list[str] | None = strawberry.field(
        default=None,
        description="Only changes of these tracked models (slugs); with `benchmarks`: of either.",
    )
    category: str | None = strawberry.field(
        default=None, description="Only changes of benchmarks in this category (its slug)."
    )


@strawberry.type(description="Which changes a webhook is sent.")
class WebhookFilter:
    benchmarks: list[str] | None = strawberry.field(description="Of these benchmarks only.")
    models: list[str] | None = strawberry.field(description="Of these tracked models only.")
    category: str | None = strawberry.field(description="Of benchmarks in this category only.")


@strawberry.input(description="A new webhook.")
class CreateWebhookInput:
    url: str = strawberry.field(
        description="Where events are POSTed: an https URL on a public address."
    )
    kinds: list[ChangeKind] | None = strawberry.field(
        default=None, description="The kinds of change sent (none given: every kind)."
    )
    filter: WebhookFilterInput | None = strawberry.field(
        default=None, description="Only some benchmarks or models, or a category."
    )
    description: str | None = strawberry.field(default=None, description="What it is for.")


@strawberry.input(description="What to change of a webhook; fields left out stay as they are.")
class UpdateWebhookInput:
    url: str | None = strawberry.field(default=None, description="Where events are POSTed.")
    kinds: list[ChangeKind] | None = strawberry.field(
        default=None, description="The kinds of change sent."
    )
    filter: WebhookFilterInput | None = strawberry.field(
        default=None, description="Which benchmarks or models, or which category."
    )
    description: str | None = strawberry.field(default=None, description="What it is for.")
    enabled: bool | None = strawberry.field(
        default=None,
        description="true: send again (after it was disabled for failing), continuing with the "
        "event given up; false: stop sending (changes meanwhile are sent once enabled).",
    )


@strawberry.type(description="One event sent, or to be sent, to a webhook, with its attempts.")
class WebhookDelivery:
    id: str = strawberry.field(
        description="The event's `webhook-id`: the same on every attempt (drop repeats by it)."
    )
    kind: str = strawberry.field(description="The event's `type`: a change kind, or `ping`.")
    sequence: int | None = strawberry.field(description="The change's number (null: a ping).")
    cursor: str | None = strawberry.field(description="The change's cursor (null: a ping).")
    status: WebhookDeliveryStatus = strawberry.field(description="Where it stands.")
    attempts: int = strawberry.field(description="How many times it was sent.")
    response_code: int | None = strawberry.field(
        description="The HTTP status of the last answer (null: none came)."
    )
    error: str | None = strawberry.field(description="What went wrong at the last attempt.")
    created_at: DateTime = strawberry.field(description="When the event was made.")
    next_attempt_at: DateTime | None = strawberry.field(
        description="When it is next tried (null: delivered, given up, or its webhook disabled)."
    )

    @classmethod
    def from_doc(cls, doc: DeliveryDoc) -> "WebhookDelivery":
        sequence, planned = doc["sequence"], doc["next_attempt_at"]
        return cls(
            id=doc["id"],
            kind=doc["kind"],
            sequence=sequence,
            cursor=None if sequence is None else encode_change_cursor(sequence),
            status=WebhookDeliveryStatus(doc["status"]),
            attempts=doc["attempts"],
            response_code=doc["response_code"],
            error=doc["error"],
            created_at=DateTime(doc["created_at"]),
            next_attempt_at=None if planned is None else _instant(planned),
        )


@strawberry.type(description="An endpoint sent the changes it asks for, signed.")
class Webhook:
    id: strawberry.ID = strawberry.field(description="The webhook's id.")
    url: str = strawberry.field(description="Where events are POSTed.")
    kinds: list[ChangeKind] = strawberry.field(description="The kinds of change sent.")
    filter: WebhookFilter = strawberry.field(description="Which changes are sent.")
    description: str | None = strawberry.field(description="What it is for.")
    enabled: bool = strawberry.field(description="Whether events are being sent.")
    disabled_reason: str | None = strawberry.field(
        description="Why it was disabled (deliveries failing past the retry period)."
    )
    owner: str = strawberry.field(description="The name of the API key that made it.")
    created_at: DateTime = strawberry.field(description="When it was made.")
    position: str | None = strawberry.field(
        description="The cursor of the last change delivered or passed over (null: none yet)."
    )

    @strawberry.field(
        directives=[sliced_by("first")],
        description="Its deliveries, newest first (up to 100).",
    )
    async def deliveries(
        self, info: strawberry.Info[Context], first: int = 20
    ) -> list[WebhookDelivery]:
        size = slice_size("first", first, MAX_PAGE_SIZE)
        docs = await info.context.store.deliveries(str(self.id), size)
        return [WebhookDelivery.from_doc(doc) for doc in docs]

    @classmethod
    def from_doc(cls, doc: WebhookDoc) -> "Webhook":
        kinds = sorted(PUBLIC_KINDS) if doc["kinds"] is None else doc["kinds"]
        position = doc["position"]
        return cls(
            id=strawberry.ID(doc["id"]),
            url=doc["url"],
            kinds=[ChangeKind[StoreChangeKind(kind).name] for kind in kinds],
            filter=WebhookFilter(
                benchmarks=doc["benchmarks"], models=doc["models"], category=doc["category"]
            ),
            description=doc["description"],
            enabled=doc["enabled"],
            disabled_reason=doc["disabled_reason"],
            owner=doc["owner"],
            created_at=DateTime(doc["created_at"]),
            position=encode_change_cursor(position) if position else None,
        )


@strawberry.type(description="A webhook and its signing secret, shown this once: keep it.")
class WebhookSecretPayload:
    webhook: Webhook = strawberry.field(description="The webhook.")
    secret: str = strawberry.field(
        description="The Standard Webhooks signing secret (`whsec_...`): verify each delivery "
        "with it. It is not shown again."
    )


@strawberry.type(description="The outcome of deleting a webhook.")
class DeleteWebhookPayload:
    id: strawberry.ID = strawberry.field(description="The webhook deleted.")


@strawberry.type
class WebhookQueries:
    @strawberry.field(
        directives=[page_of()],
        description="Your webhooks (an admin key: everyone's), oldest first, a page at a time.",
    )
    async def webhooks(
        self, info: strawberry.Info[Context], first: int = 20, after: str | None = None
    ) -> Connection[Webhook]:
        identity = _caller(info)
        at = page(first, after)
        store = info.context.store
        found = await store.webhooks(None if identity.is_admin else identity.name)
        return connection(
            [Webhook.from_doc(doc) for doc in at.of(found)], at=at, total_count=len(found)
        )


@strawberry.type
class WebhookMutations:
    @strawberry.mutation(
        directives=[WRITE],
        description="Make a webhook: each change it asks for is POSTed to `url`, signed. Any "
        "API key may make its own. The signing secret is shown this once.",
    )
    async def create_webhook(
        self, info: strawberry.Info[Context], input: CreateWebhookInput, dry_run: DryRun = False
    ) -> WebhookSecretPayload:
        identity = _caller(info)
        store = info.context.store
        await _checked_url(info, input.url, "input.url")
        _, newest = await store.change_bounds()
        secret = new_secret()
        doc = WebhookDoc(
            id=new_webhook_id(),
            owner=identity.name,
            url=input.url,
            kinds=_kinds(input.kinds),
            benchmarks=_slugs(input.filter, "benchmarks"),
            models=_slugs(input.filter, "models"),
            category=None if input.filter is None else input.filter.category,
            description=_description(input.description),
            secret=secret,
            enabled=True,
            disabled_reason=None,
            position=newest,  # from now on: the log before it is the feed's to page through
            created_at=now_instant(),
            lease_holder=None,
            lease_until=0.0,
        )
        if dry_run:
            if len(await store.webhooks(identity.name)) >= MAX_WEBHOOKS_PER_KEY:
                raise _too_many()
        elif not await store.insert_webhook(doc, MAX_WEBHOOKS_PER_KEY):
            raise _too_many()
        return WebhookSecretPayload(webhook=Webhook.from_doc(doc), secret=secret)

    @strawberry.mutation(
        directives=[WRITE],
        description="Change a webhook; `enabled: true` sends again after it was disabled.",
    )
    async def update_webhook(
        self,
        info: strawberry.Info[Context],
        id: strawberry.ID,
        input: UpdateWebhookInput,
        dry_run: DryRun = False,
    ) -> Webhook:
        doc = await _owned(info, id)
        fields: dict[str, Any] = {}
        if input.url is not None:
            await _checked_url(info, input.url, "input.url")
            fields["url"] = input.url
        if input.kinds is not None:
            fields["kinds"] = _kinds(input.kinds)
        if input.filter is not None:
            fields |= {
                "benchmarks": _slugs(input.filter, "benchmarks"),
                "models": _slugs(input.filter, "models"),
                "category": input.filter.category,
            }
        if input.description is not None:
            fields["description"] = _description(input.description)
        if input.enabled is not None:
            fields |= {"enabled": input.enabled, "disabled_reason": None}
        if (
            fields
            and not dry_run
            and not await info.context.store.update_webhook(doc["id"], fields)
        ):
            raise _not_found(id)
        return Webhook.from_doc({**doc, **fields})  # type: ignore[typeddict-item]

    @strawberry.mutation(
        directives=[WRITE], description="Delete a webhook and its deliveries: nothing more is sent."
    )
    async def delete_webhook(
        self, info: strawberry.Info[Context], id: strawberry.ID, dry_run: DryRun = False
    ) -> DeleteWebhookPayload:
        doc = await _owned(info, id)
        if not dry_run and not await info.context.store.delete_webhook(doc["id"]):
            raise _not_found(id)
        return DeleteWebhookPayload(id=id)

    @strawberry.mutation(
        directives=[WRITE],
        description="Give a webhook a new signing secret, shown this once; deliveries from now "
        "on are signed with it.",
    )
    async def rotate_webhook_secret(
        self, info: strawberry.Info[Context], id: strawberry.ID, dry_run: DryRun = False
    ) -> WebhookSecretPayload:
        doc = await _owned(info, id)
        secret = new_secret()
        if not dry_run and not await info.context.store.update_webhook(
            doc["id"], {"secret": secret}
        ):
            raise _not_found(id)
        return WebhookSecretPayload(webhook=Webhook.from_doc(doc), secret=secret)

    @strawberry.mutation(
        directives=[WRITE],
        description="Send the webhook a test event of type `ping` (soon, while it is enabled).",
    )
    async def test_webhook(
        self, info: strawberry.Info[Context], id: strawberry.ID, dry_run: DryRun = False
    ) -> WebhookDelivery:
        doc, identity = await _owned(info, id), _caller(info)
        at = now_instant()
        delivery_id = f"msg_{doc['id']}_{PING}_{time.time_ns()}"
        delivery = new_delivery(
            doc["id"],
            delivery_id,
            sequence=None,
            kind=PING,
            body=ping_body(doc["id"], at, identity.name),
            created_at=at,
            manual=True,
        )
        if not dry_run:
            await info.context.store.save_delivery(delivery)
        return WebhookDelivery.from_doc(delivery)

    @strawberry.mutation(
        directives=[WRITE],
        description="Send an event again (a delivered or given-up one), with its same id.",
    )
    async def redeliver_webhook_event(
        self,
        info: strawberry.Info[Context],
        webhook_id: strawberry.ID,
        event_id: str,
        dry_run: DryRun = False,
    ) -> WebhookDelivery:
        doc = await _owned(info, webhook_id)
        store = info.context.store
        delivery = await store.delivery(event_id)
        if delivery is None or delivery["webhook"] != doc["id"]:
            raise ApiError(
                f"`eventId`: the webhook has no event {shown(event_id)}.",
                code=ErrorCode.NOT_FOUND,
            )
        if delivery["status"] == "pending":
            raise ApiError(
                f"`eventId`: {shown(event_id)} is still being delivered.",
                code=ErrorCode.CONFLICT,
            )
        now = time.time()
        sequence = delivery["sequence"]
        queued: DeliveryDoc = {
            **delivery,
            "status": "pending",
            "retry_since": now,
            "next_attempt_at": now,
            # One the feed has passed is sent on its own; one it has not, in the feed's order.
            "manual": sequence is None or sequence <= doc["position"],
        }
        if not dry_run:
            await store.save_delivery(queued)
        return WebhookDelivery.from_doc(queued)


def _caller(info: strawberry.Info[Context]) -> Identity:
    identity = info.context.identity
    if identity is None:
        raise ApiError(
            "Webhooks need an API key (any scope): send `Authorization: Bearer <key>`.",
            code=ErrorCode.UNAUTHENTICATED,
        )
    return identity


async def _owned(info: strawberry.Info[Context], id: strawberry.ID) -> WebhookDoc:
    """The webhook `id`, if the caller's key made it (or is an admin's)."""
    identity = _caller(info)
    doc = await info.context.store.webhook(str(id))
    if doc is None or (doc["owner"] != identity.name and not identity.is_admin):
        raise _not_found(id)
    return doc


def _too_many() -> ApiError:
    return ApiError(f"A key may have at most {MAX_WEBHOOKS_PER_KEY} webhooks.")


def _not_found(id: str) -> ApiError:
    return ApiError(f"No webhook {shown(id)} of yours.", code=ErrorCode.NOT_FOUND)


async def _checked_url(info: strawberry.Info[Context], url: str, argument: str) -> None:
    refusal = await _destinations(info).refusal(url)
    if refusal is not None:
        raise ApiError(f"`{argument}`: {refusal}", details={"argument": argument})


def _destinations(info: strawberry.Info[Context]) -> Destinations:
    """The rules the server was configured with (its services); the strict ones without."""
    services = info.context.services
    return Destinations() if services is None else services.webhook_destinations


def _kinds(kinds: list[ChangeKind] | None) -> list[str] | None:
    if not kinds:
        return None
    return sorted({StoreChangeKind[kind.name].value for kind in kinds})


def _slugs(filter: WebhookFilterInput | None, field: str) -> list[str] | None:
    slugs: list[str] | None = None if filter is None else getattr(filter, field)
    if slugs is None:
        return None
    if len(slugs) > MAX_FILTER_SLUGS:
        raise ApiError(f"`input.filter.{field}`: at most {MAX_FILTER_SLUGS} slugs.")
    return sorted(set(slugs))


def _description(text: str | None) -> str | None:
    if text is not None and len(text) > MAX_DESCRIPTION:
        raise ApiError(f"`input.description`: at most {MAX_DESCRIPTION} characters.")
    if text is not None and (problem := control_character(text)) is not None:
        raise InvalidInput.at(("input", "description"), problem)
    return text


def now_instant() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _instant(unix: float) -> DateTime:
    return DateTime(datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
