"""The rows of documents: a benchmark's (with its side tables of model keys and tracked ranks),
a model's (with its name keys), the others'; reading and writing them inside a transaction."""

import sqlite3
from typing import Any

import orjson

from store.changes import ChangeDraft, document_change
from store.documents import BenchmarkDoc, ModelDoc, TrackedRankDoc
from store.queries import AlreadyExists, Collection, Neighbourhood, NeighbourhoodRequest, summary_of
from store.sqlite.tables import BENCHMARK_COLUMNS, ORDERS, SLUGGED, dumps
from store.subjects import KEYS, benchmark_written, written


def placements_of(connection: sqlite3.Connection, slug: str) -> set[tuple[str, int]]:
    rows = connection.execute("SELECT model, rank FROM model_ranks WHERE slug = ?", (slug,))
    return {(model, rank) for model, rank in rows}


def benchmark_rows(
    connection: sqlite3.Connection,
    where: str | None,
    values: list[str] | None,
    *,
    history: bool = False,
    close: str = "",
    order: str = "",
) -> list[BenchmarkDoc]:
    """Benchmarks matching `where` (`column IN` the values), with their history if asked."""
    columns = "doc, history" if history else "doc"
    sql = f"SELECT {columns} FROM benchmarks"
    parameters: list[str] = []
    if where is not None and values is not None:
        if not values:
            return []
        sql += f" WHERE {where} ({','.join('?' * len(values))}){close}"
        parameters = values
    docs = []
    for row in connection.execute(f"{sql} {order}", parameters).fetchall():
        doc = orjson.loads(row[0])
        if history:
            doc["history"] = orjson.loads(row[1])
        docs.append(doc)
    return docs


def neighbourhood(connection: sqlite3.Connection, request: NeighbourhoodRequest) -> Neighbourhood:
    """Four indexed queries: the family, the category's size, a slice of siblings, their count;
    the benchmarks as their summaries."""
    family = connection.execute(
        "SELECT summary FROM benchmarks WHERE family = ?", (request.family,)
    ).fetchall()
    category_count = connection.execute(
        "SELECT count(*) FROM benchmarks WHERE category = ?", (request.category,)
    ).fetchone()[0]
    others = "FROM benchmarks WHERE category = ? AND family != ?"
    sibling_count = connection.execute(
        f"SELECT count(*) {others}", (request.category, request.family)
    ).fetchone()[0]
    rows = connection.execute(
        f"SELECT summary {others} ORDER BY {ORDERS['prominence']} LIMIT ? OFFSET ?",
        (request.category, request.family, request.siblings_limit, request.siblings_offset),
    ).fetchall()
    return Neighbourhood(
        request=request,
        family=[orjson.loads(blob) for (blob,) in family],
        category_count=category_count,
        siblings=[orjson.loads(blob) for (blob,) in rows],
        sibling_count=sibling_count,
    )


def replace_row(
    connection: sqlite3.Connection, collection: Collection, slug: str, revision: int, doc: Any
) -> ChangeDraft | None:
    """Put `doc` in place of the document `slug` if it is still at `revision`: the change it
    made (None: it moved on)."""
    table = table_of(collection)
    row = connection.execute(
        f"SELECT doc FROM {table} WHERE slug = ? AND revision = ?", (slug, revision)
    ).fetchone()
    if row is None:
        return None
    before = orjson.loads(row[0])
    if collection == "benchmarks":
        subjects = benchmark_written(before, doc, placements_of(connection, slug))
    else:
        subjects = written(collection, before, doc)
    connection.execute(f"DELETE FROM {table} WHERE slug = ?", (slug,))
    insert_row(connection, collection, doc)
    return document_change(collection, before, doc, subjects)


def insert_row(
    connection: sqlite3.Connection, collection: Collection, doc: Any, by: str | None = None
) -> ChangeDraft:
    """Insert one document with its indexed columns and side-table keys: the change it made
    (`by` its writer, where the document does not say)."""
    try:
        if collection == "benchmarks":
            insert_benchmark(connection, doc)
        elif collection == "models":
            insert_model(connection, doc)
        elif collection == "api_keys":
            connection.execute(
                "INSERT INTO api_keys (key_id, name, created_at, revoked_at, doc) "
                "VALUES (?, ?, ?, ?, ?)",
                (doc["key_id"], doc["name"], doc["created_at"], doc["revoked_at"], dumps(doc)),
            )
            return document_change(collection, None, {}, [KEYS], by)
        elif collection in SLUGGED:
            connection.execute(
                f"INSERT INTO {collection} (slug, doc) VALUES (?, ?)", (doc["slug"], dumps(doc))
            )
        else:
            raise ValueError(f"no collection named {str(collection)!r}")
    except sqlite3.IntegrityError as error:
        raise AlreadyExists(taken(collection, doc, str(error))) from error
    subjects = (
        benchmark_written(None, doc, set())
        if collection == "benchmarks"
        else written(collection, None, doc)
    )
    return document_change(collection, None, doc, subjects, by)


def insert_benchmark(connection: sqlite3.Connection, doc: BenchmarkDoc) -> None:
    stored = {k: v for k, v in doc.items() if k != "history"}
    made_by = doc["made_by"]
    connection.execute(
        f"INSERT INTO benchmarks ({BENCHMARK_COLUMNS}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            doc["slug"],
            doc["revision"],
            doc["name"],
            doc["category"]["slug"],
            doc["family"],
            doc["status"],
            doc["retired"],
            doc["demotion"],
            doc["name_key"],
            doc["release_key"],
            doc["kind"],
            None if made_by is None else made_by["slug"],
            dumps(stored),
            dumps(doc.get("history", [])),
            dumps(summary_of(doc)),
        ),
    )
    keys = {entry["model_key"] for entry in doc["entries"] if "model_key" in entry}
    connection.executemany(
        "INSERT INTO benchmark_models (model_key, slug) VALUES (?, ?)",
        [(key, doc["slug"]) for key in keys],
    )
    insert_ranks(connection, doc["slug"], doc.get("tracked_ranks", []))


def insert_ranks(connection: sqlite3.Connection, slug: str, ranks: list[TrackedRankDoc]) -> None:
    connection.executemany(
        "INSERT INTO model_ranks (model, slug, rank) VALUES (?, ?, ?)",
        [(rank["model"], slug, rank["rank"]) for rank in ranks],
    )


def insert_model(connection: sqlite3.Connection, doc: ModelDoc) -> None:
    connection.execute(
        "INSERT INTO models (slug, revision, doc) VALUES (?, ?, ?)",
        (doc["slug"], doc["revision"], dumps(doc)),
    )
    connection.executemany(
        "INSERT INTO model_keys (key, slug) VALUES (?, ?)",
        [(key, doc["slug"]) for key in doc.get("keys", [])],
    )


def taken(collection: Collection, doc: Any, message: str) -> dict[str, Any]:
    """Which unique value was taken, as MongoDB names it: `{"slug": ...}`, `{"keys": ...}`."""
    if "model_keys.key" in message:
        return {"keys": doc.get("keys")}
    if "api_keys.name" in message:
        return {"name": doc["name"]}
    if "api_keys.key_id" in message:
        return {"key_id": doc["key_id"]}
    return {"slug": doc.get("slug")}


def table_of(collection: Collection) -> str:
    if collection not in ("benchmarks", "models", "labs", "categories", "api_keys"):
        raise ValueError(f"no collection named {str(collection)!r}")
    return collection
