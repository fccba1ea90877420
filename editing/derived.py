"""Fields the store keeps beside the data so that its queries can use indexes, or so that a
catalog reads no leaderboard (each benchmark's leaders).

They are derived by the resolvers' rules on every write, from the data itself, never edited on
their own.
"""

from resolvers import (
    Board,
    Row,
    TrackedModels,
    catalog_order,
    family_root,
    leader,
    leaderboard,
    model_key,
    model_keys,
    tracked_leader,
)
from store import BenchmarkDoc, EntryDoc, LeadersDoc, MetricDoc, ModelDoc, PlaceDoc, TrackedRankDoc


def with_benchmark_keys(doc: BenchmarkDoc, tracked: TrackedModels) -> BenchmarkDoc:
    """The benchmark with its family root, its current leaderboard (the last read's rows, each
    with its model lookup key), the date of that read, and the place of each tracked model on
    it and its leaders (`tracked` holds at least the tracked models its rows name)."""
    history = doc.get("history", [])
    latest = history[-1] if history else None
    entries: list[EntryDoc] = [
        {**entry, "model_key": model_key(entry["model_name"])}
        for entry in (latest["entries"] if latest else [])
    ]
    board = _board(entries, doc["metric"], tracked)
    return {
        **doc,
        "family": family_root(doc),
        **catalog_order(doc),
        "entries": entries,
        "scores_refreshed_on": latest["read_on"] if latest else None,
        "tracked_ranks": _tracked_ranks(board.rows),
        "leaders": _leaders(board),
    }


def placed_anew(
    docs: list[BenchmarkDoc], tracked: TrackedModels
) -> tuple[dict[str, tuple[int, list[TrackedRankDoc]]], dict[str, LeadersDoc]]:
    """What `Store.set_tracked_ranks` writes for these benchmarks once the tracked models
    their rows name changed: each one's places at its revision, and its leaders. Both
    depend on which rows are tracked, so they are placed anew together (editing.workspace)."""
    boards = {doc["slug"]: _board(doc["entries"], doc["metric"], tracked) for doc in docs}
    ranks = {
        doc["slug"]: (doc["revision"], _tracked_ranks(boards[doc["slug"]].rows)) for doc in docs
    }
    return ranks, {slug: _leaders(board) for slug, board in boards.items()}


def _board(entries: list[EntryDoc], metric: MetricDoc, tracked: TrackedModels) -> Board:
    higher_is_better = metric["higher_is_better"]
    rows = leaderboard(entries, higher_is_better=higher_is_better, tracked=tracked)
    return Board(rows, unit=metric["unit"], higher_is_better=higher_is_better)


def _tracked_ranks(rows: list[Row]) -> list[TrackedRankDoc]:
    """Where each tracked model stands on a leaderboard: what a model's results are ordered by."""
    return [{"model": row.model["slug"], "rank": row.rank} for row in rows if row.model]


def _leaders(board: Board) -> LeadersDoc:
    """The leader and the tracked leader, as a catalog row shows them: kept with the benchmark
    so that a catalog reads no entry."""
    return {
        "leader": _place(board, leader(board.rows)),
        "tracked_leader": _place(board, tracked_leader(board.rows)),
    }


def _place(board: Board, row: Row | None) -> PlaceDoc | None:
    if row is None:
        return None
    places = board.range_of(row)
    return {
        "rank": row.rank,
        "model": None if row.model is None else row.model["slug"],
        "entry": row.entry,
        "best": places.best,
        "worst": places.worst,
        "tied_with_leader": board.tied_with_leader(row),
    }


def with_model_keys(doc: ModelDoc) -> ModelDoc:
    """The model with the lookup keys of its name and aliases."""
    return {**doc, "keys": model_keys(doc)}
