"""Manifests of trusted documents (ALMANAC_TRUSTED_DOCUMENTS), read and checked for their form:
a client build's own (Apollo's persisted-query manifest, Relay's `persisted_queries.json`) or
`almanac trusted-documents`' (`{"<sha256>": "<text>"}`). Whether each document runs on the
schema is checked where the schema is (server.graphql.persisted): the settings build none."""

import hashlib
import re
from pathlib import Path

import orjson


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def trusted_manifest(texts: list[str]) -> dict[str, str]:
    """The manifest of these documents (`ALMANAC_TRUSTED_DOCUMENTS`): each by its SHA-256."""
    return {sha256_hex(text): text for text in texts}


APOLLO_FORMAT = "apollo-persisted-query-manifest"
SHA256_ID = re.compile(r"[0-9a-fA-F]{64}")


def manifest_documents(manifest: object, where: str) -> dict[str, str]:
    """The documents of a client's manifest by the ids it gives them: Apollo's persisted-query
    manifest (`{"format": "apollo-persisted-query-manifest", "operations": [...]}`), or an
    object of id to text (Relay's `persisted_queries.json`, `almanac trusted-documents`')."""
    if isinstance(manifest, dict) and manifest.get("format") == APOLLO_FORMAT:
        if manifest.get("version") != 1:
            raise ValueError(f"{where}: an Apollo manifest of version 1 is expected")
        operations = manifest.get("operations")
        if not isinstance(operations, list):
            raise ValueError(f"{where}: `operations` must be a list")
        documents: dict[str, str] = {}
        for index, operation in enumerate(operations):
            if not (
                isinstance(operation, dict)
                and isinstance(operation.get("id"), str)
                and isinstance(operation.get("body"), str)
            ):
                raise ValueError(f"{where}: operations[{index}] needs an `id` and a `body`")
            documents[operation["id"]] = operation["body"]
        return documents
    if not isinstance(manifest, dict) or not all(
        isinstance(text, str) for text in manifest.values()
    ):
        raise ValueError(
            f"{where}: expected Apollo's persisted-query manifest, or a JSON object of id to "
            "document (Relay's persisted_queries.json)"
        )
    for document_id, text in manifest.items():
        # An id shaped as a SHA-256 (this API's manifests, Relay's SHA256 ids) is the text's.
        if SHA256_ID.fullmatch(document_id) and sha256_hex(text) != document_id.lower():
            raise ValueError(f"{where}: {document_id} is not the SHA-256 of its document")
    return manifest


def read_manifest(path: Path) -> dict[str, str]:
    """The documents of the manifest at `path` by their ids (ValueError naming what is wrong;
    OSError if it cannot be read)."""
    try:
        manifest = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as error:
        raise ValueError(f"{path} is not JSON: {error}") from None
    return manifest_documents(manifest, str(path))
