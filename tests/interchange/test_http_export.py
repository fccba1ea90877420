"""`GET /export.eee.jsonl`: the almanac as Every Eval Ever records, streamed, charged as
`/export.ndjson` is (1 + one point an item, before anything is read), and revalidated by ETag."""

import json

import httpx

from interchange import eee_lines, record_problem
from store import Store


async def test_the_records_stream_and_are_charged_as_the_export(
    client: httpx.AsyncClient, store: Store
) -> None:
    response = await client.get("/export.eee.jsonl")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-ndjson"
    assert 'filename="almanac.eee.jsonl"' in response.headers["content-disposition"]
    assert response.text == "".join([line async for line in eee_lines(store)])
    records = [json.loads(line) for line in response.text.splitlines()]
    assert [record_problem(record) for record in records] == [None] * len(records)
    ndjson = await client.get("/export.ndjson")
    assert response.headers["almanac-cost"] == ndjson.headers["almanac-cost"]
    again = await client.get(
        "/export.eee.jsonl", headers={"If-None-Match": response.headers["etag"]}
    )
    assert again.status_code == 304
    assert again.headers["almanac-cost"] == "1"
    assert response.headers["etag"] != ndjson.headers["etag"]
