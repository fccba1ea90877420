"""Reading a request's body within the size limit, whatever its headers claim."""

import pytest
from starlette.types import Message

from server.graphql.request import BodyTooLarge, limited

LIMIT = 1000


class Receiving:
    """An ASGI `receive` delivering `chunks` of a body, as a server's parser would."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __call__(self) -> Message:
        body = self.chunks.pop(0)
        return {"type": "http.request", "body": body, "more_body": bool(self.chunks)}


async def test_a_body_also_sent_chunked_is_counted_whatever_its_length_says() -> None:
    """With `Transfer-Encoding` beside a small `Content-Length`, a parser may follow the first
    (h11 does) and deliver a body of any length: it is counted, and refused past the limit."""
    headers = [(b"content-length", b"10"), (b"transfer-encoding", b"chunked")]
    receive = limited(Receiving([b"x" * 600, b"x" * 600]), LIMIT, {"headers": headers})
    assert (await receive())["body"] == b"x" * 600
    with pytest.raises(BodyTooLarge):
        await receive()


async def test_a_body_of_a_declared_length_within_the_limit_is_read_as_it_comes() -> None:
    receiving = Receiving([b"x" * 10])
    receive = limited(receiving, LIMIT, {"headers": [(b"content-length", b"10")]})
    assert receive is receiving  # the parser delivers no more than the length: nothing to count


async def test_a_body_without_a_length_is_counted() -> None:
    receive = limited(Receiving([b"x" * 600, b"x" * 600]), LIMIT, {"headers": []})
    await receive()
    with pytest.raises(BodyTooLarge):
        await receive()
