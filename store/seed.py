"""The bundled dataset: real published results, in the import format (see its `provenance`)."""

import json
from importlib import resources
from typing import Any


def load_bundled_dataset() -> dict[str, Any]:
    text = resources.files("store").joinpath("data/almanac.json").read_text(encoding="utf-8")
    dataset: dict[str, Any] = json.loads(text)
    return dataset
