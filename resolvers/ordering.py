"""The order of catalogs and siblings: benchmarks in use first, then by prominence (higher
first), name ignoring case, and newest release (unknown last).

Each benchmark keeps these as fields, each ascending, so that the store's indexes can order by
them (see editing.derived).
"""

from store import BenchmarkDoc, SortFieldsDoc


def catalog_order(doc: BenchmarkDoc) -> SortFieldsDoc:
    released = doc["released_on"]
    return {
        "retired": 0 if doc["status"] == "IN_USE" else 1,
        "demotion": -doc["prominence"],
        "name_key": doc["name"].casefold(),
        # Newest release first, unknown last: a month counted down from 9999-12.
        "release_key": "~"
        if released is None
        else f"{9999 - int(released[:4]):04d}-{12 - int(released[5:7]):02d}",
    }
