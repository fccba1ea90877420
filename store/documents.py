"""The shapes of the documents the store reads and writes (plain data, no behaviour)."""

from typing import NewType, NotRequired, TypedDict

Date = NewType("Date", str)
"""A calendar date, stored as ISO 8601 `YYYY-MM-DD` (store.dates checks them)."""

YearMonth = NewType("YearMonth", str)
"""A month, stored as `YYYY-MM` (release dates have no day)."""

DateTime = NewType("DateTime", str)
"""An instant, stored as ISO 8601 in UTC to the second: `2026-11-12T09:30:00Z`."""


class LabDoc(TypedDict):
    slug: str
    name: str


class CategoryDoc(TypedDict):
    slug: str
    name: str


class MetricDoc(TypedDict):
    name: str
    unit: str
    higher_is_better: bool


class SourceDoc(TypedDict):
    name: str
    url: str | None
    # A SourceKind's name, and for a lab's report the lab (absent in older documents).
    kind: NotRequired[str | None]
    lab: NotRequired[LabDoc | None]


class IntervalDoc(TypedDict):
    """A score's interval as published; `level` is its confidence (0.95)."""

    low: float
    high: float
    level: float


class EntryDoc(TypedDict):
    """One result read from a leaderboard: a model at a setting, with its score."""

    model_name: str
    setting: str | None
    score: float
    source: str | None
    published_on: Date | None
    note: NotRequired[str | None]
    # How uncertain the score is, and who reported it where not the benchmark's source
    # (absent in older documents).
    interval: NotRequired[IntervalDoc | None]
    standard_error: NotRequired[float | None]
    sample_size: NotRequired[int | None]
    reported_by: NotRequired[str | None]
    # Lookup key of model_name, kept by the store so results can be found by model.
    model_key: NotRequired[str]


class ReadDoc(TypedDict):
    """One read of a benchmark's leaderboard from its source: kept forever, in order."""

    revision: int
    read_on: Date
    recorded_by: str
    recorded_at: DateTime
    entries: list[EntryDoc]


class ModelCardReportDoc(TypedDict):
    model_name: str
    score: float
    reported_on: Date | None
    url: str | None


class TrackedRankDoc(TypedDict):
    """A tracked model's place on a benchmark's leaderboard (derived on writes: editing.derived)."""

    model: str  # its slug
    rank: int


class SortFieldsDoc(TypedDict):
    """What catalogs and siblings are ordered by, each ascending (resolvers.ordering)."""

    retired: int
    demotion: int
    name_key: str
    release_key: str


class PlaceDoc(TypedDict):
    """A leaderboard row as a catalog shows it, stored with its benchmark (editing.derived):
    its entry, its rank, its tracked model (its slug: the model is read as it is now), and
    the places it could hold given the uncertainty of every row (resolvers.ranking)."""

    rank: int
    model: str | None
    entry: EntryDoc
    best: int
    worst: int
    tied_with_leader: bool


class LeadersDoc(TypedDict):
    """A benchmark's leader and tracked leader, derived on every write of the benchmark and
    again whenever the tracked models its rows name change (editing.workspace)."""

    leader: PlaceDoc | None
    tracked_leader: PlaceDoc | None


class BenchmarkSummaryDoc(TypedDict):
    """What a catalog row can show of a benchmark: its own fields and its stored leaders,
    without its leaderboard, so that a catalog page decodes no entry."""

    slug: str
    name: str
    description: str | None
    note: str | None
    metric: MetricDoc
    parent: str | None
    track_position: int | None
    made_by: LabDoc | None
    released_on: YearMonth | None
    kind: str | None
    level: str | None
    scoring: str | None
    answer_format: str | None
    task_availability: str | None
    status: str
    category: CategoryDoc
    prominence: int
    ceiling: float | None
    # Absent in older documents.
    test_set_published_on: NotRequired[YearMonth | None]
    task_count: NotRequired[int | None]
    source: SourceDoc | None
    scores_refreshed_on: Date | None
    revision: int
    updated_by: str
    updated_at: DateTime
    # Derived on every write (editing.derived), so that the store's indexes can use them.
    # Slug of the family's root (resolvers.family): a benchmark's parent and tracks come back
    # with it in one query.
    family: NotRequired[str]
    # What catalogs and siblings are ordered by (resolvers.ordering).
    retired: NotRequired[int]
    demotion: NotRequired[int]
    name_key: NotRequired[str]
    release_key: NotRequired[str]
    # The leader and tracked leader a catalog row shows (absent in documents written before
    # they were kept: read from the leaderboard then).
    leaders: NotRequired[LeadersDoc]


class BenchmarkDoc(BenchmarkSummaryDoc):
    entries: list[EntryDoc]
    model_card_reports: list[ModelCardReportDoc]
    # Every read of the leaderboard, oldest first; `entries` is the last one's. Left out of
    # reads that only need the current leaderboard.
    history: NotRequired[list[ReadDoc]]
    # Each tracked model's place on the current leaderboard, best first: a model's results
    # are paged in that order.
    tracked_ranks: NotRequired[list[TrackedRankDoc]]


class ModelDoc(TypedDict):
    slug: str
    name: str
    aliases: list[str]
    lab: LabDoc | None
    released_on: YearMonth | None
    capability_index_rank: int | None
    revision: int
    updated_by: str
    updated_at: DateTime
    # Lookup keys of the name and every alias, kept by the store (unique across models).
    keys: NotRequired[list[str]]


class SiteFiguresDoc(TypedDict):
    launch_posts_read: int
    labs_read: int


class CategoryCountDoc(TypedDict):
    slug: str
    name: str
    benchmark_count: int


class BudgetDoc(TypedDict):
    """A key's own budget, in place of the configured one."""

    capacity: int
    restore_rate: float  # points per second


class ApiKeyDoc(TypedDict):
    """An API key: only a hash of its secret is kept."""

    key_id: str
    name: str
    scope: str
    secret_sha256: str
    created_at: str
    revoked_at: str | None
    budget: NotRequired[BudgetDoc]  # absent: the configured key budget


class WebhookDoc(TypedDict):
    """A partner's webhook endpoint: where the changes it asked for are sent, and how far."""

    id: str
    owner: str  # the name of the API key that made it
    url: str
    kinds: list[str] | None  # the ChangeKinds sent (None: every public one)
    benchmarks: list[str] | None  # slugs: changes of these benchmarks (None: any)
    models: list[str] | None  # slugs: changes of these models (with benchmarks: of either)
    category: str | None  # of the benchmarks changed (None: any)
    description: str | None
    secret: str  # Standard Webhooks `whsec_...`: signing needs the secret itself
    enabled: bool
    disabled_reason: str | None
    position: int  # the sequence of the last change delivered (or passed over)
    created_at: str
    lease_holder: str | None  # the delivery worker sending its deliveries now
    lease_until: float  # Unix time the lease ends


class DeliveryDoc(TypedDict):
    """One event sent (or to be sent) to a webhook, with its attempts."""

    id: str  # the `webhook-id`: the same on every attempt
    webhook: str
    sequence: int | None  # the change's (None: a test ping)
    kind: str
    body: str  # the JSON sent, signed as it is
    status: str  # pending, delivered or failed
    attempts: int
    response_code: int | None
    error: str | None
    created_at: str
    retry_since: float  # Unix time the current round of attempts began
    next_attempt_at: float | None  # Unix time (None: none planned)
    manual: bool  # queued by testWebhook or redeliverWebhookEvent, outside the feed's order
