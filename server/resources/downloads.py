"""Downloads of exactly what a page shows: a benchmark's leaderboard (CSV or JSON) and a model's
results (CSV); and the whole dataset, streamed as NDJSON in the import format.

Each is answered by the schema, from a document a client could send itself (`LEADERBOARD`,
`STANDINGS`), so the rules are the page's: best score per model, the order, the ranks, the
tracked flags. Each is charged what that document costs for the rows it returns, and carries a
strong ETag (a digest of its bytes): a client that holds it gets a 304.
"""

import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from api_errors import ApiError, ErrorCode
from editing import exported_lines
from releases import INTERVAL_ENDS, LEADERBOARD, UNCERTAINTY_COLUMNS, csv_bytes, leaderboard_csv
from request_limits import Allowance, throttled_error
from schema import (
    LIST_SIZES,
    CachedAnswer,
    Identity,
    OperationKey,
    Services,
    digest,
    encode_change_cursor,
    encode_json,
    kept_answer,
    new_context,
    schema,
)
from server.charges import MINIMUM, Charges, client_of
from server.exchange import begin_exchange
from server.http_caching import (
    cache_control,
    cache_tags,
    conditional,
    entity_tag,
    held_etag,
    matches,
)
from server.min_change import request_reached
from server.resources.export_slots import ExportSlot, ExportSlots
from store import SourceKind, Store

STANDINGS = """
query Standings($slug: String!, $first: Int!, $after: String) {
  model(slug: $slug) {
    slug
    name
    standings(first: $first, after: $after) {
      nodes {
        rank score setting leads leadsTrackedModels
        benchmark { slug name scoresRefreshedOn }
        couldLead couldLeadTrackedModels
        row {
          interval { low high level computed } standardError sampleSize
          rankRange { best worst } reportedBy selfReported releasedAfterTestSet
        }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}"""
# A leaderboard's rows in one go (all a read can hold); a model's results 100 at a time (a
# connection's page).
ALL_ROWS = LIST_SIZES.max_slice
PAGE = LIST_SIZES.max_page

STANDINGS_COLUMNS = (
    "benchmark",
    "benchmark_name",
    "rank",
    "score",
    "setting",
    "leads",
    "leads_tracked_models",
    "read_on",
    *UNCERTAINTY_COLUMNS,
    "could_lead",
    "could_lead_tracked_models",
)
CSV = "text/csv; charset=utf-8"
JSON = "application/json"
NDJSON = "application/x-ndjson"
PROCESS = secrets.token_hex(4)
CHANGES_CURSOR = "Almanac-Changes-Cursor"
FEED = "/changes.atom"  # what a download links to: the feed of what changes it
"""This process, in the export's ETag: its data version counts from 0 at each start."""


class Downloads:
    def __init__(self, store: Store, charges: Charges, services: Services) -> None:
        self.store = store
        self.charges = charges
        self.services = services
        self.exports = ExportSlots(charges.settings.max_concurrent_exports)
        self.timeout = charges.settings.request_timeout_seconds  # for Almanac-Min-Change

    async def leaderboard(self, request: Request) -> Response:
        """`/benchmarks/{slug}.csv` or `.json`."""
        slug, kind = request.path_params["slug"], request.path_params["format"]
        missing = f"There is no benchmark with slug {slug!r}."
        try:
            only = report_filter(request.query_params)
        except ApiError as refusal:
            return await self.charges.refused(request, None, refusal)

        variables: dict[str, Any] = {"slug": slug, **only}

        async def price(store: Store) -> int | None:
            if (size := await store.leaderboard_size(slug)) is None:
                return None
            # The rows it holds: the query priced is the query run.
            variables["first"] = min(size, ALL_ROWS)
            return self.charges.price_download(LEADERBOARD, variables)

        async def make(identity: Identity | None, read: set[str]) -> bytes:
            data = await run_query(self.store, request, identity, read, LEADERBOARD, variables)
            benchmark = _found(data["benchmark"], missing)
            if kind == "json":
                return encode_json(benchmark)
            return leaderboard_csv(benchmark)

        if kind not in ("csv", "json"):
            unknown = ApiError(
                f"No download ends in .{kind}: ask for .csv, .json or .atom.", status=404
            )
            return await self.charges.refused(request, None, unknown)
        media_type = CSV if kind == "csv" else JSON
        feed = f"/benchmarks/{slug}.atom"
        return await self.answer(request, price, make, missing, f"{slug}.{kind}", media_type, feed)

    async def standings(self, request: Request) -> Response:
        """`/models/{slug}.csv`: the model's result on every benchmark that lists it."""
        slug = request.path_params["slug"]
        missing = f"There is no tracked model with slug {slug!r}."

        pages: list[int] = []  # each page's `first`: the queries priced are the queries run

        async def price(store: Store) -> int | None:
            if not await store.models_by_slugs([slug]):
                return None
            _, results = await store.model_results(slug, 0, 0)
            pages.extend(min(PAGE, results - page * PAGE) for page in range(-(-results // PAGE)))
            return sum(
                self.charges.price_download(STANDINGS, {"slug": slug, "first": first})
                for first in pages or [0]
            )

        async def make(identity: Identity | None, read: set[str]) -> bytes:
            lines, after = [], None
            for first in pages or [0]:
                variables = {"slug": slug, "first": first, "after": after}
                data = await run_query(self.store, request, identity, read, STANDINGS, variables)
                page = _found(data["model"], missing)["standings"]
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
                        *((node["row"]["interval"] or {}).get(end) for end in INTERVAL_ENDS),
                        node["row"]["standardError"],
                        node["row"]["sampleSize"],
                        node["row"]["rankRange"]["best"],
                        node["row"]["rankRange"]["worst"],
                        node["row"]["reportedBy"],
                        node["row"]["selfReported"],
                        node["row"]["releasedAfterTestSet"],
                        node["couldLead"],
                        node["couldLeadTrackedModels"],
                    )
                    for node in page["nodes"]
                ]
                after = page["pageInfo"]["endCursor"]
            return csv_bytes(STANDINGS_COLUMNS, lines)

        return await self.answer(request, price, make, missing, f"{slug}.csv", CSV, FEED)

    async def export(self, request: Request) -> Response:
        """`/export.ndjson`: everything, in the import format, one item a line."""

        def lines(store: Store) -> AsyncIterator[bytes]:
            return (encode_json(line) + b"\n" async for line in exported_lines(store))

        return await self.streamed_export(request, lines, "almanac.ndjson", "export")

    async def streamed_export(
        self,
        request: Request,
        lines: Callable[[Store], AsyncIterator[bytes]],
        filename: str,
        tag: str,
    ) -> Response:
        """The whole almanac as `lines` make it, streamed as they are read. Its ETag names the
        export (`tag`) and the data's version in this process: a client holding it gets a 304.
        Priced from a count (1 + one point an item) and charged before any document is read;
        one export per client streams at a time, and a few in all (`ExportSlots`)."""
        identity, slot, items, etag, revalidated = None, None, None, None, False
        store = self.store
        try:
            identity = await self.charges.identify(request)
            await request_reached(store, request.headers, self.timeout)
            version = store.version.current
            etag = f'"{tag}-{PROCESS}-{version}"' if version is not None else None
            revalidated = etag is not None and matches(request.headers.get("if-none-match"), etag)
            if not revalidated:
                slot = self.exports.take(client_of(request, identity))
                items = (await store.item_counts()).items
        except ApiError as refusal:
            if slot is not None:
                slot.release()
            return await self.charges.refused(request, identity, refusal)
        if revalidated:
            note_download(request, NDJSON, identity, MINIMUM, None)
            return await self.charges.not_modified(request, identity, {"etag": etag or ""})
        assert slot is not None
        assert items is not None
        cost = self.charges.price_export(items)
        allowance = await self.charges.charge(request, identity, cost)
        note_download(request, NDJSON, identity, cost, allowance)
        if not allowance.allowed:
            slot.release()
            return self.charges.refusal(throttled_error(cost, allowance), cost, allowance)
        try:
            _, logged = await store.change_bounds()  # before any document is read
        except BaseException:
            slot.release()
            raise
        headers = {
            **self.charges.headers(allowance, cost),
            "Cache-Control": cache_control(identity is None, 0),
            "Content-Disposition": f'attachment; filename="{filename}"',
            # The change feed's cursor to go on from: every change up to it is in the export.
            CHANGES_CURSOR: encode_change_cursor(logged),
            **({"ETag": etag} if etag is not None else {}),
        }
        return SlotStreamed(slot, lines(store), 200, headers, NDJSON)

    async def answer(
        self,
        request: Request,
        price: Callable[[Store], Awaitable[int | None]],
        make: Callable[[Identity | None, set[str]], Awaitable[bytes]],
        missing: str,
        filename: str | None,
        media_type: str,
        feed: str | None = FEED,
    ) -> Response:
        """The download: priced (`price`: None if what it names is not there) and paid for
        before it is made (`make`), kept until what it read changes, with its ETag and a link to
        the feed of its changes; or why not."""
        identity = None
        try:
            identity = await self.charges.identify(request)
            await request_reached(self.store, request.headers, self.timeout)
        except ApiError as refusal:
            return await self.charges.refused(request, identity, refusal)
        store = self.store
        key: OperationKey = (request.url.path, None, request.url.query.encode())
        version = store.version.current
        kept, cost = kept_answer(self.services, key, store.version), self.services.costs.get(key)
        headers = {
            "Cache-Control": cache_control(
                identity is None, self.charges.settings.cache_max_age_seconds
            ),
            "Vary": "Accept-Encoding, Authorization",
        }
        if kept is not None and cost is not None:
            if (etag := held_etag(request, kept.digest)) is not None:
                note_download(request, media_type, identity, MINIMUM, None)
                return await self.charges.not_modified(request, identity, {**headers, "etag": etag})
        else:
            kept = None
            if (cost := await price(store)) is None:
                note_download(request, media_type, identity, MINIMUM, None)
                return await self.charges.refused(request, identity, ApiError(missing, status=404))
        allowance = await self.charges.charge(request, identity, cost)
        note_download(request, media_type, identity, cost, allowance)
        if not allowance.allowed:
            return self.charges.refusal(throttled_error(cost, allowance), cost, allowance)
        if kept is None:
            read: set[str] = set()
            body = await make(identity, read)
            kept = CachedAnswer(version or 0, body, digest(body), None, frozenset(read))
            if version is not None and self.services.answers is not None:
                self.services.answers.put(key, kept)
                self.services.costs.put(key, cost)
        headers |= {
            **self.charges.headers(allowance, cost),
            **cache_tags(kept.reads),
            "ETag": entity_tag(kept.digest),
        }
        if filename is not None:  # a file to keep; else a page to read (a feed)
            headers["Content-Disposition"] = f'attachment; filename="{filename}"'
        if feed is not None:
            headers["Link"] = f'<{feed}>; rel="alternate"; type="application/atom+xml"'
        return conditional(request, Response(kept.data, 200, headers, media_type))


def report_filter(params: Mapping[str, str]) -> dict[str, Any]:
    """A leaderboard download's filter by who reported each score, from its query string:
    `reportedBy=MODEL_DEVELOPER,THIRD_PARTY` and `excludeSelfReported=true` (as the
    `leaderboard` field's arguments of the same names)."""
    only: dict[str, Any] = {}
    if (kinds := params.get("reportedBy")) is not None:
        named = [kind.strip() for kind in kinds.split(",") if kind.strip()]
        if unknown := [kind for kind in named if kind not in SourceKind.__members__]:
            known = ", ".join(SourceKind.__members__)
            raise ApiError(f"reportedBy: {unknown[0]!r} is not a source kind; one of {known}.")
        only["reportedBy"] = named
    if (exclude := params.get("excludeSelfReported")) is not None:
        if exclude not in ("true", "false"):
            raise ApiError(f"excludeSelfReported must be true or false, not {exclude!r}.")
        only["excludeSelfReported"] = exclude == "true"
    return only


class SlotStreamed(StreamingResponse):
    """A streamed body (the export, a release's file), which gives its export slot (if it
    took one) back when it ends: sent, failed, or cut off by a client gone (even one gone
    before the first line)."""

    def __init__(self, slot: ExportSlot | None, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.slot = slot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            if self.slot is not None:
                self.slot.release()


def note_download(
    request: Request,
    media_type: str,
    identity: Identity | None,
    cost: int,
    allowance: Allowance | None,
) -> None:
    """What the request log and the metrics say of a download (or a release's file): its key,
    its cost, a throttle."""
    exchange = begin_exchange(request.scope, media_type)
    exchange.identity, exchange.cost = identity, cost
    if allowance is not None and not allowance.allowed:
        exchange.code = ErrorCode.THROTTLED.value


async def run_query(
    store: Store,
    request: Request,
    identity: Identity | None,
    read: set[str],
    document: str,
    variables: dict[str, Any],
) -> dict[str, Any]:
    """The download's query run, noting in `read` what it read."""
    context = new_context(store, request, identity)
    result = await schema.execute(document, variable_values=variables, context_value=context)
    read |= context.read
    if result.errors or result.data is None:
        # The documents are fixed and their variables checked: only a failure inside ends here.
        raise RuntimeError(f"the download's query failed: {result.errors}")
    return result.data


def _found(value: Any, message: str) -> Any:
    """What the download names: there when it was priced, unless deleted since."""
    if value is None:
        raise ApiError(message, status=404)
    return value
