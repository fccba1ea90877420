"""Trusted documents' manifests read as the client's build writes them (Apollo's persisted-query
manifest, Relay's `persisted_queries.json`, `almanac trusted-documents`'), each malformed one
refused with a message naming the file and what is wrong."""

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from server.graphql.persisted import load_trusted_documents
from server.manifests import APOLLO_FORMAT, manifest_documents, trusted_manifest

TEXT = "{ categories { slug } }"
SHA256 = hashlib.sha256(TEXT.encode()).hexdigest()


def apollo(*operations: Any, version: Any = 1) -> dict[str, Any]:
    return {"format": APOLLO_FORMAT, "version": version, "operations": list(operations)}


@pytest.mark.parametrize(
    ("manifest", "documents"),
    [
        (apollo({"id": "page", "body": TEXT, "name": "Page", "type": "query"}), {"page": TEXT}),
        (apollo(), {}),
        ({"3f2b8c0e9a1d4b7c": TEXT}, {"3f2b8c0e9a1d4b7c": TEXT}),  # Relay's own ids
        ({SHA256.upper(): TEXT}, {SHA256.upper(): TEXT}),  # a SHA-256 in capitals
        ({"format": "other", "page": TEXT}, {"format": "other", "page": TEXT}),
        ({}, {}),
    ],
)
def test_a_manifest_gives_its_documents_by_their_ids(
    manifest: dict[str, Any], documents: dict[str, str]
) -> None:
    assert manifest_documents(manifest, "m.json") == documents


RELAY_OR_APOLLO = (
    "m.json: expected Apollo's persisted-query manifest, or a JSON object of id to document "
    "(Relay's persisted_queries.json)"
)


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        (apollo(version=2), "m.json: an Apollo manifest of version 1 is expected"),
        (apollo(version=None), "m.json: an Apollo manifest of version 1 is expected"),
        ({"format": APOLLO_FORMAT, "version": 1}, "m.json: `operations` must be a list"),
        (
            {"format": APOLLO_FORMAT, "version": 1, "operations": {"id": "a"}},
            "m.json: `operations` must be a list",
        ),
        (
            apollo({"id": "a", "body": TEXT}, "page"),
            "m.json: operations[1] needs an `id` and a `body`",
        ),
        (apollo({"id": 7, "body": TEXT}), "m.json: operations[0] needs an `id` and a `body`"),
        (apollo({"id": "a", "body": None}), "m.json: operations[0] needs an `id` and a `body`"),
        (apollo({"body": TEXT}), "m.json: operations[0] needs an `id` and a `body`"),
        ([TEXT], RELAY_OR_APOLLO),
        ({"page": TEXT, "other": 7}, RELAY_OR_APOLLO),
        ({"0" * 64: TEXT}, f"m.json: {'0' * 64} is not the SHA-256 of its document"),
    ],
)
def test_a_malformed_manifest_is_refused_with_what_is_wrong(manifest: Any, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        manifest_documents(manifest, "m.json")


def test_a_manifest_file_is_read_and_each_document_checked(tmp_path: Path) -> None:
    path = tmp_path / "trusted.json"
    path.write_text(json.dumps(trusted_manifest([TEXT])))
    assert load_trusted_documents(path) == {SHA256: TEXT}

    path.write_text(json.dumps({"page": TEXT, "broken": "{ zzz }"}))
    problem = "Cannot query field 'zzz' on type 'Query'."
    message = f"{path}: broken does not run on this schema: {problem}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        load_trusted_documents(path)

    path.write_text(json.dumps([TEXT]))
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}: expected Apollo's "):
        load_trusted_documents(path)

    path.write_text("{ not json")
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))} is not JSON: ") as refused:
        load_trusted_documents(path)
    assert refused.value.__cause__ is None
