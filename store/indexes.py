"""The indexes every query relies on; creating them again is a no-op."""

from typing import Any

from pymongo import ASCENDING, IndexModel

BENCHMARK_INDEXES = [
    IndexModel([("slug", ASCENDING)], unique=True, name="slug_unique"),
    # A category's siblings in their order; the catalog in each of its orders.
    IndexModel(
        [
            ("category.slug", ASCENDING),
            ("retired", ASCENDING),
            ("demotion", ASCENDING),
            ("name_key", ASCENDING),
            ("slug", ASCENDING),
        ],
        name="category_siblings",
    ),
    IndexModel(
        [(f, ASCENDING) for f in ("retired", "demotion", "name_key", "slug")], name="by_prominence"
    ),
    IndexModel([("name_key", ASCENDING), ("slug", ASCENDING)], name="by_name"),
    IndexModel([(f, ASCENDING) for f in ("release_key", "name_key", "slug")], name="by_release"),
    IndexModel([("family", ASCENDING)], name="family"),
    IndexModel([("entries.model_key", ASCENDING)], name="entry_model_key"),
    IndexModel([("tracked_ranks.model", ASCENDING)], name="tracked_model"),
    IndexModel([("made_by.slug", ASCENDING)], name="lab"),
]

MODEL_INDEXES = [
    IndexModel([("slug", ASCENDING)], unique=True, name="slug_unique"),
    # An alias belongs to at most one model: the database itself refuses a second owner.
    IndexModel([("keys", ASCENDING)], unique=True, name="keys_unique"),
]


SLUG_INDEXES = [IndexModel([("slug", ASCENDING)], unique=True, name="slug_unique")]

API_KEY_INDEXES = [
    IndexModel([("key_id", ASCENDING)], unique=True, name="key_id_unique"),
    IndexModel([("name", ASCENDING)], unique=True, name="name_unique"),
]

# The change log is read by sequence (its `_id`) and pruned by time.
CHANGE_INDEXES = [
    IndexModel([("at", ASCENDING)], name="by_time"),
    IndexModel([("slug", ASCENDING), ("_id", ASCENDING)], name="of_document"),
    IndexModel([("category", ASCENDING), ("_id", ASCENDING)], name="in_category"),
]

# Webhooks by the key that made them; a webhook's deliveries, newest first.
WEBHOOK_INDEXES = [IndexModel([("owner", ASCENDING)], name="of_owner")]
DELIVERY_INDEXES = [
    IndexModel([("webhook", ASCENDING), ("created_at", ASCENDING)], name="in_order"),
]


async def ensure_indexes(db: Any) -> None:
    await db.benchmarks.create_indexes(BENCHMARK_INDEXES)
    await db.models.create_indexes(MODEL_INDEXES)
    await db.labs.create_indexes(SLUG_INDEXES)
    await db.categories.create_indexes(SLUG_INDEXES)
    await db.api_keys.create_indexes(API_KEY_INDEXES)
    await db.changes.create_indexes(CHANGE_INDEXES)
    await db.webhooks.create_indexes(WEBHOOK_INDEXES)
    await db.webhook_deliveries.create_indexes(DELIVERY_INDEXES)
