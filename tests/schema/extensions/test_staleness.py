"""The staleness index lives in the answer cache: an answer the cache lets go leaves nothing of
itself behind, answers that read the same subjects share one set of them, and what the index
holds is counted in the cache's bytes."""

import httpx
import pytest

from schema import CachedAnswer, OperationKey
from schema.extensions.staleness import AnswerCache
from server.app import AlmanacApp
from server.settings import Settings

CACHE_BYTES = 40_000
QUERIES = 120


@pytest.fixture
def settings() -> Settings:
    return Settings(response_cache_bytes=CACHE_BYTES)


def cache_of(app: AlmanacApp) -> AnswerCache[OperationKey, CachedAnswer]:
    answers = app.services.shared.graphql.answers
    assert answers is not None
    return answers


async def distinct(client: httpx.AsyncClient, number: int) -> None:
    query = f"query Distinct{number} {{ modelCardCoverage {{ labsRead }} }}"
    response = await client.post("/graphql", json={"query": query})
    assert response.status_code == 200, response.text
    assert "errors" not in response.json(), response.text


async def test_answers_let_go_leave_the_index(client: httpx.AsyncClient, app: AlmanacApp) -> None:
    for number in range(QUERIES):
        await distinct(client, number)
    answers, staleness = cache_of(app), app.services.shared.graphql.staleness
    assert 0 < len(answers) < QUERIES  # the cache let some go
    indexed = [key for group in staleness.groups.values() for key in group.keys]
    assert sorted(indexed) == sorted(answers)
    assert answers.bytes_held <= CACHE_BYTES


async def test_answers_that_read_alike_share_their_reads(
    client: httpx.AsyncClient, app: AlmanacApp
) -> None:
    for number in range(3):
        await distinct(client, number)
    answers = cache_of(app)
    kept = [answers.peek(key) for key in answers]
    assert len(kept) == 3
    assert all(answer is not None and answer.reads for answer in kept)
    assert len({id(answer.reads) for answer in kept if answer is not None}) == 1
    assert len(app.services.shared.graphql.staleness.groups) == 1


async def test_an_answer_replaced_is_indexed_once(
    client: httpx.AsyncClient, app: AlmanacApp
) -> None:
    answers, staleness = cache_of(app), app.services.shared.graphql.staleness
    await distinct(client, 1)
    [key] = list(answers)
    first = answers.peek(key)
    assert first is not None
    first.version = -1  # no longer current: the next request computes it again
    await distinct(client, 1)
    second = answers.peek(key)
    assert second is not None
    assert second is not first
    assert [list(group.keys) for group in staleness.groups.values()] == [[key]]
    assert second.asks == 1.0 + first.asks / 2  # asks halve with each answer kept


async def test_an_answer_queued_again_in_its_round_is_refreshed_once(
    client: httpx.AsyncClient, app: AlmanacApp
) -> None:
    """A change during a round of refreshes queues again an answer the round holds: the round's
    refresh serves both, and the queue does not count it twice."""
    staleness = app.services.shared.graphql.staleness
    await distinct(client, 1)
    [key] = list(cache_of(app))
    staleness.changed(None)
    assert len(staleness) == 1
    staleness.ordered = sorted(staleness.queued)  # a round begun (as `take` begins one)
    staleness.queued.clear()
    staleness.changed(None)  # again, before the round reaches it
    assert staleness.take() == key
    assert len(staleness) == 0
    assert staleness.take() is None
