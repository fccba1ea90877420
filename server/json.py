"""JSON encoding of responses."""

from typing import Any

import orjson


def encode_json(data: Any) -> bytes:
    return orjson.dumps(data)
