"""The almanac's rules: plain functions over the stored documents (no GraphQL, no store), each
with its property tests. A leaderboard from a benchmark's entries (leaderboard, ranking,
uncertainty), which models are tracked (tracking), who reported a score (reporting), a
benchmark's family (family), headroom to its ceiling (headroom), its test set's publication
(contamination), its history of reads (history), and the orders of catalogs (catalog, ordering).

Other packages import from here, never from the modules inside (import-linter checks it)."""

from resolvers.catalog import BenchmarkOrder, sort_models
from resolvers.ceiling import headroom, near_ceiling
from resolvers.contamination import released_after_test_set, when_test_set_published
from resolvers.families import family, family_root
from resolvers.history import (
    ReadChanges,
    changes_by_read,
    entries_of,
    entry_identity,
    is_recorded,
    read_as_of,
    read_changes,
    results_ever_recorded,
    same_entries,
)
from resolvers.leaderboards import (
    ChartPoint,
    Row,
    display_name,
    last_model_added,
    leader,
    leaderboard,
    scores_over_time,
    standing,
    strongest_model_tested,
    tracked_leader,
    tracked_model_count,
)
from resolvers.ordering import catalog_order
from resolvers.ranking import Board, Places, RankRange, StoredPlaces
from resolvers.reporting import ReportFilter, reported_by, reported_entries, self_reported
from resolvers.tracking import (
    TrackedModels,
    entry_key,
    index_by_key,
    model_key,
    model_keys,
    tracked_model,
)
from resolvers.uncertainty import Interval, interval_of

__all__ = [
    "BenchmarkOrder",
    "Board",
    "ChartPoint",
    "Interval",
    "Places",
    "RankRange",
    "ReadChanges",
    "ReportFilter",
    "Row",
    "StoredPlaces",
    "TrackedModels",
    "catalog_order",
    "changes_by_read",
    "display_name",
    "entries_of",
    "entry_identity",
    "entry_key",
    "family",
    "family_root",
    "headroom",
    "index_by_key",
    "interval_of",
    "is_recorded",
    "last_model_added",
    "leader",
    "leaderboard",
    "model_key",
    "model_keys",
    "near_ceiling",
    "read_as_of",
    "read_changes",
    "released_after_test_set",
    "reported_by",
    "reported_entries",
    "results_ever_recorded",
    "same_entries",
    "scores_over_time",
    "self_reported",
    "sort_models",
    "standing",
    "strongest_model_tested",
    "tracked_leader",
    "tracked_model",
    "tracked_model_count",
    "when_test_set_published",
]
