"""A release's files over HTTP: `/releases/{id}/{file}`, streamed from the store as they are
read, each with its SHA-256 as its strong ETag and cached for a year as immutable (a release
never changes); a deleted release answers 410 Gone, saying when and why.

Priced as the downloads they stand for, from the release's record, and charged before any file
is read: the almanac's NDJSON as the export (1 + a point a benchmark and a model, one at a time
per client, `ExportSlots`), a leaderboard's CSV as `/benchmarks/{slug}.csv` of its rows, the
manifest the minimum.
"""

import hashlib

from starlette.requests import Request
from starlette.responses import Response

from api_errors import ApiError, ErrorCode
from releases import (
    LEADERBOARD,
    ReleaseFile,
    Site,
    StoredRelease,
    file_chunks,
    file_of,
    is_rendered,
    rendered,
    rendering_source,
    stored_release,
)
from request_limits import throttled_error
from server.charges import MINIMUM, client_of
from server.http_caching import cache_control, conditional, entity_tag, matches
from server.resources.downloads import Downloads, SlotStreamed, note_download
from store import Store

IMMUTABLE = "public, max-age=31536000, immutable"
"""A year, the most RFC 9111 advises, and never revalidated: a release's file never changes."""
WHOLE_ALMANAC = ("application/x-ndjson", "application/jsonl")
"""The media types of the files that hold the whole almanac: priced and paced as the export."""


class Releases:
    def __init__(self, downloads: Downloads) -> None:
        self.downloads = downloads
        self.charges = downloads.charges
        self.store = downloads.store

    async def file(self, request: Request) -> Response:
        """`/releases/{release_id}/{name}`: a file the release's manifest lists, or the
        manifest itself (`manifest.json`)."""
        release_id, name = request.path_params["release_id"], request.path_params["name"]
        if is_rendered(name):
            return await self.rendering(request, release_id, name)
        identity, slot = None, None
        try:
            identity = await self.charges.identify(request)
            stored = await found_release(self.store, release_id)
            file = file_of(stored, name)
            if file is None:
                raise ApiError(f"Release {release_id} holds no file {name!r}.", status=404)
        except ApiError as refusal:
            note_download(request, "application/json", identity, MINIMUM, None)
            return await self.charges.refused(request, identity, refusal)
        etag = f'"{file.sha256}"'
        headers = {"ETag": etag, "Cache-Control": IMMUTABLE}
        if matches(request.headers.get("if-none-match"), etag):
            note_download(request, file.media_type, identity, MINIMUM, None)
            return await self.charges.not_modified(request, identity, headers)
        whole = file.media_type in WHOLE_ALMANAC
        try:
            if whole:
                slot = self.downloads.exports.take(client_of(request, identity))
        except ApiError as refusal:
            return await self.charges.refused(request, identity, refusal)
        cost = self.price(stored, file)
        allowance = await self.charges.charge(request, identity, cost)
        note_download(request, file.media_type, identity, cost, allowance)
        if not allowance.allowed:
            if slot is not None:
                slot.release()
            return self.charges.refusal(throttled_error(cost, allowance), cost, allowance)
        try:
            chunks = await file_chunks(self.store, stored, name)
        except BaseException:
            if slot is not None:
                slot.release()
            raise
        headers |= {
            **self.charges.headers(allowance, cost),
            "Content-Length": str(file.size),
            "Content-Disposition": f'attachment; filename="{name.rsplit("/", 1)[-1]}"',
        }
        return SlotStreamed(slot, chunks, 200, headers, _with_charset(file.media_type))

    async def rendering(self, request: Request, release_id: str, name: str) -> Response:
        """What the release is rendered as (releases.rendered): its Croissant descriptor, its
        citation, a leaderboard as a table. Priced as the file it is read from (a table: its
        leaderboard's CSV; the rest: the manifest), with an ETag of its bytes; kept as any
        download (`max-age` from the settings, then revalidated), not as immutable: a rendering
        can improve."""
        identity = None
        settings = self.charges.settings
        site = Site(
            str(request.base_url).rstrip("/"), settings.site_name, settings.release_license_url
        )
        try:
            identity = await self.charges.identify(request)
            stored = await found_release(self.store, release_id)
            try:
                source = rendering_source(stored, name, site)
            except LookupError as missing:
                raise ApiError(str(missing), status=404) from None
        except ApiError as refusal:
            note_download(request, "application/json", identity, MINIMUM, None)
            return await self.charges.refused(request, identity, refusal)
        cost = self.price(stored, source)
        allowance = await self.charges.charge(request, identity, cost)
        note_download(request, "text/plain", identity, cost, allowance)
        if not allowance.allowed:
            return self.charges.refusal(throttled_error(cost, allowance), cost, allowance)
        made = await rendered(self.store, stored, name, site)
        headers = {
            **self.charges.headers(allowance, cost),
            "ETag": entity_tag(hashlib.sha256(made.content).hexdigest()),
            "Cache-Control": cache_control(identity is None, settings.cache_max_age_seconds),
        }
        return conditional(request, Response(made.content, 200, headers, made.media_type))

    def price(self, stored: StoredRelease, file: ReleaseFile) -> int:
        """What the file costs: as the download it stands for."""
        counts = stored.release.counts
        if file.media_type in WHOLE_ALMANAC:
            return self.charges.price_export(counts.benchmarks + counts.models)
        if (rows := stored.rows.get(file.name)) is not None:
            slug = file.name.removeprefix("benchmarks/").removesuffix(".csv")
            return self.charges.price_download(LEADERBOARD, {"slug": slug, "first": rows})
        return MINIMUM


async def found_release(store: Store, release_id: str) -> StoredRelease:
    """The release named, if it is there: else 404, or 410 with its tombstone."""
    stored = await stored_release(store, release_id)
    if stored is None:
        raise ApiError(f"There is no release {release_id!r}.", status=404)
    if (deleted := stored.deleted) is not None:
        raise ApiError(
            f"Release {release_id} was deleted on {deleted.at.isoformat()}: {deleted.why}",
            status=410,
            code=ErrorCode.GONE,
            details={"deletedAt": deleted.at.isoformat(), "reason": deleted.why},
        )
    return stored


def _with_charset(media_type: str) -> str:
    return f"{media_type}; charset=utf-8" if media_type.startswith("text/") else media_type
