"""Downloads of exactly what a page shows: a benchmark's leaderboard (CSV or JSON) and a model's
results (CSV); and the whole dataset, streamed as NDJSON in the import format.

Each is answered by the schema, from a document a client could send itself (`LEADERBOARD`,
`STANDINGS`), so the rules are the page's: best score per model, the order, the ranks, the
tracked flags. Each is charged what that document costs for the rows it returns, and carries a
strong ETag (a digest of its bytes): a client that holds it gets a 304.
"""

import csv
import io
import secrets
from collections.abc import Awaitable, Callable
from functools import cache
from typing import Any

from graphql import DocumentNode, parse
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from api_errors import ApiError, ErrorCode
from editing import dataset_lines, export_dataset
from request_limits import REFUSED_COST, Allowance, query_cost, throttled_error
from schema import LIST_SIZES, Identity, digest, encode_json, new_context, published_types, schema
from server.client_budgets import ClientBudgets, rate_limit_headers
from server.errors import refusal_response
from server.exchange import KEY, Exchange
from server.http_caching import cache_control, conditional, entity_tag, matches

LEADERBOARD = """
query Leaderboard($slug: String!, $first: Int!) {
  benchmark(slug: $slug) {
    slug
    name
    scoresRefreshedOn
    metric { name unit higherIsBetter }
    leaderboard(first: $first) {
      rank modelName listedAs tracked score setting source publishedOn note
    }
  }
}"""
STANDINGS = """
query Standings($slug: String!, $first: Int!, $after: String) {
  model(slug: $slug) {
    slug
    name
    standings(first: $first, after: $after) {
      nodes {
        rank score setting leads leadsTrackedModels
        benchmark { slug name scoresRefreshedOn }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}"""
# All of a leaderboard's rows in one go; a model's results 100 at a time (a connection's page).
ALL_ROWS = LIST_SIZES.max_slice
PAGE = LIST_SIZES.max_page

LEADERBOARD_COLUMNS = (
    "rank",
    "model",
    "listed_as",
    "tracked",
    "score",
    "setting",
    "source",
    "published_on",
    "note",
    "read_on",
)
STANDINGS_COLUMNS = (
    "benchmark",
    "benchmark_name",
    "rank",
    "score",
    "setting",
    "leads",
    "leads_tracked_models",
    "read_on",
)
CSV = "text/csv; charset=utf-8"
JSON = "application/json"
NDJSON = "application/x-ndjson"
EXPORTED = ("labs", "categories", "models", "benchmarks")
PROCESS = secrets.token_hex(4)
"""This process, in the export's ETag: its data version counts from 0 at each start."""


class Downloads:
    def __init__(self, clients: ClientBudgets) -> None:
        self.clients = clients

    async def leaderboard(self, request: Request) -> Response:
        """`/benchmarks/{slug}.csv` or `.json`."""
        slug, kind = request.path_params["slug"], request.path_params["format"]

        async def make(identity: Identity | None) -> tuple[bytes, int]:
            data = await _run(request, identity, LEADERBOARD, {"slug": slug, "first": ALL_ROWS})
            benchmark = _found(data["benchmark"], f"There is no benchmark with slug {slug!r}.")
            rows = benchmark["leaderboard"]
            cost = _cost(LEADERBOARD, {"slug": slug, "first": len(rows)})
            if kind == "json":
                return encode_json(benchmark), cost
            read_on = benchmark["scoresRefreshedOn"]
            lines = [
                (
                    row["rank"],
                    row["modelName"],
                    row["listedAs"],
                    row["tracked"],
                    row["score"],
                    row["setting"],
                    row["source"],
                    row["publishedOn"],
                    row["note"],
                    read_on,
                )
                for row in rows
            ]
            return _csv(LEADERBOARD_COLUMNS, lines), cost

        if kind not in ("csv", "json"):
            refusal = ApiError(f"No download ends in .{kind}: ask for .csv or .json.", status=404)
            return await self.clients.refused(request, None, refusal)
        return await self.answer(request, make, f"{slug}.{kind}", CSV if kind == "csv" else JSON)

    async def standings(self, request: Request) -> Response:
        """`/models/{slug}.csv`: the model's result on every benchmark that lists it."""
        slug = request.path_params["slug"]

        async def make(identity: Identity | None) -> tuple[bytes, int]:
            lines, cost, after = [], 0, None
            while True:
                variables = {"slug": slug, "first": PAGE, "after": after}
                data = await _run(request, identity, STANDINGS, variables)
                model = _found(data["model"], f"There is no tracked model with slug {slug!r}.")
                page = model["standings"]
                cost += _cost(STANDINGS, {**variables, "first": len(page["nodes"])})
                lines += [
                    (
                        node["benchmark"]["slug"],
                        node["benchmark"]["name"],
                        node["rank"],
                        node["score"],
                        node["setting"],
                        node["leads"],
                        node["leadsTrackedModels"],
                        node["benchmark"]["scoresRefreshedOn"],
                    )
                    for node in page["nodes"]
                ]
                if not page["pageInfo"]["hasNextPage"]:
                    return _csv(STANDINGS_COLUMNS, lines), cost
                after = page["pageInfo"]["endCursor"]

        return await self.answer(request, make, f"{slug}.csv", CSV)

    async def export(self, request: Request) -> Response:
        """`/export.ndjson`: everything, in the import format, one item a line, streamed. Its
        ETag names the data's version in this process: a client holding it gets a 304."""
        identity = None
        try:
            identity = await self.clients.identify(request)
        except ApiError as refusal:
            return await self.clients.refused(request, identity, refusal)
        store = request.app.state.store
        version = store.version.current
        etag = f'"export-{PROCESS}-{version}"' if version is not None else None
        if etag is not None and matches(request.headers.get("if-none-match"), etag):
            allowance = await self.clients.charge(request, identity, REFUSED_COST)
            return Response(
                status_code=304, headers={**rate_limit_headers(allowance), "ETag": etag}
            )
        dataset = await export_dataset(store)
        cost = 1 + sum(len(dataset[section]) for section in EXPORTED)  # each item an object
        allowance = await self.clients.charge(request, identity, cost)
        _note(request, NDJSON, identity, cost, allowance)
        if not allowance.allowed:
            return self.throttled(cost, allowance)
        headers = {
            **rate_limit_headers(allowance),
            "Cache-Control": cache_control(identity is None, 0),
            "Content-Disposition": 'attachment; filename="almanac.ndjson"',
            **({"ETag": etag} if etag is not None else {}),
        }
        lines = (encode_json(line) + b"\n" for line in dataset_lines(dataset))
        return StreamingResponse(lines, 200, headers, NDJSON)

    async def answer(
        self,
        request: Request,
        make: Callable[[Identity | None], Awaitable[tuple[bytes, int]]],
        filename: str,
        media_type: str,
    ) -> Response:
        """The download, charged, with its ETag; or why not."""
        identity = None
        try:
            identity = await self.clients.identify(request)
            body, cost = await make(identity)
        except ApiError as refusal:
            return await self.clients.refused(request, identity, refusal)
        allowance = await self.clients.charge(request, identity, cost)
        _note(request, media_type, identity, cost, allowance)
        if not allowance.allowed:
            return self.throttled(cost, allowance)
        headers = {
            **rate_limit_headers(allowance),
            "ETag": entity_tag(digest(body)),
            "Cache-Control": cache_control(
                identity is None, self.clients.settings.cache_max_age_seconds
            ),
            "Vary": "Accept-Encoding, Authorization",
            "Content-Disposition": f'attachment; filename="{filename}"',
        }
        return conditional(request, Response(body, 200, headers, media_type))

    def throttled(self, cost: int, allowance: Allowance) -> Response:
        report = {"cost": self.clients.cost_report(cost, allowance)}
        headers = rate_limit_headers(allowance)
        return refusal_response(throttled_error(cost, allowance), report, headers)


def _note(
    request: Request, media_type: str, identity: Identity | None, cost: int, allowance: Allowance
) -> None:
    """What the request log and the metrics say of a download: its key, its cost, a throttle."""
    code = None if allowance.allowed else ErrorCode.THROTTLED.value
    request.scope.setdefault("state", {})[KEY] = Exchange(
        media_type, identity=identity, cost=cost, code=code
    )


async def _run(
    request: Request, identity: Identity | None, document: str, variables: dict[str, Any]
) -> dict[str, Any]:
    context = new_context(request.app.state.store, request, identity)
    result = await schema.execute(document, variable_values=variables, context_value=context)
    if result.errors or result.data is None:
        # The documents are fixed and their variables checked: only a failure inside ends here.
        raise RuntimeError(f"the download's query failed: {result.errors}")
    return result.data


def _found(value: Any, message: str) -> Any:
    if value is None:
        raise ApiError(message, status=404)
    return value


def _cost(document: str, variables: dict[str, Any]) -> int:
    return query_cost(published_types(schema), _parsed(document), None, variables, LIST_SIZES)


@cache
def _parsed(document: str) -> DocumentNode:
    return parse(document)


def _cell(value: Any) -> Any:
    """As CSV readers expect it: empty for none, `true`/`false` for booleans."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def _csv(columns: tuple[str, ...], lines: list[tuple[Any, ...]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([_cell(value) for value in line] for line in lines)
    return out.getvalue().encode()
