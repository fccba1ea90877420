"""API keys: created and revoked with the CLI, sent as `Authorization: Bearer <key>`.

A key reads `alm_<id>_<secret>`. Only a SHA-256 hash of the secret is stored (the secret is
random, so a slow password hash would add nothing); it is compared in constant time. Keys are
looked up on every request, so a revoked key stops working on the next one, and a key given
its own budget (a partner on a bigger plan, the site's own server) has it on the next one.
"""

import asyncio
import contextlib
import hashlib
import hmac
import itertools
import os
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from api_errors import ApiError
from editing import control_character
from request_limits import BucketPolicy
from schema import Identity
from store import AlreadyExists, ApiKeyDoc, BudgetDoc, Collection, Store

SCOPES = ("read", "admin")
PREFIX = "alm"
MAX_NAME_LENGTH = 100
ADMIN_KEY_FILE = "admin-key"
"""The embedded store's admin key, in its data directory (ALMANAC_DATA_DIR)."""
EMBEDDED_ADMIN_KEY_NAME = "embedded-admin"


WWW_AUTHENTICATE = {"WWW-Authenticate": 'Bearer realm="almanac"'}


class InvalidCredentials(ApiError):
    """The request carries credentials that are malformed, unknown or revoked (or none, where
    the API needs them)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status=401, headers=WWW_AUTHENTICATE)


async def create_key(
    store: Store, name: str, scope: str, budget: BucketPolicy | None = None
) -> str:
    """Store a new key and return it: the only time its secret is ever shown."""
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    if (problem := control_character(name)) is not None:
        raise ValueError(f"a key's name {problem}")
    if not name.strip():
        raise ValueError("a key needs a name")
    if len(name.strip()) > MAX_NAME_LENGTH:
        raise ValueError(f"a key's name has at most {MAX_NAME_LENGTH} characters")
    key_id, secret = secrets.token_hex(6), secrets.token_hex(32)
    doc: ApiKeyDoc = {
        "key_id": key_id,
        "name": name.strip(),
        "scope": scope,
        "secret_sha256": _digest(secret),
        "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "revoked_at": None,
    }
    if budget is not None:
        doc["budget"] = _budget_doc(budget)
    try:
        await store.insert(Collection.API_KEYS, doc)
    except AlreadyExists as error:
        raise ValueError(f"there is already a key named {name!r}") from error
    return f"{PREFIX}_{key_id}_{secret}"


class KeptKey(NamedTuple):
    key: str
    made: bool
    """Made just now: the only time it is shown unasked."""


async def kept_key(store: Store, path: Path, name: str, scope: str) -> KeptKey:
    """The key kept in the file at `path`, made (and the file written, for its owner only) the
    first time. A kept key that was revoked or lost is replaced by a new one."""
    if key := await in_force(store, path):
        return KeptKey(key, made=False)
    taken = {doc["name"] for doc in await store.api_keys()}
    unused = next(
        candidate
        for candidate in itertools.chain([name], (f"{name}-{n}" for n in itertools.count(2)))
        if candidate not in taken
    )
    key = await create_key(store, unused, scope)
    await asyncio.to_thread(_keep_key, path, key)
    return KeptKey(key, made=True)


async def in_force(store: Store, path: Path) -> str | None:
    """The key kept in the file at `path`, if there is one and it works."""
    if key := await asyncio.to_thread(_read_key, path):
        with contextlib.suppress(InvalidCredentials):
            if await authenticate(store, f"Bearer {key}") is not None:
                return key
    return None


def _read_key(path: Path) -> str | None:
    return path.read_text(encoding="utf-8").strip() if path.is_file() else None


def _keep_key(path: Path, key: str) -> None:
    """The key written for its owner only: a file that existed keeps its mode when opened, so it
    is set before the key is written."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        os.fchmod(descriptor, 0o600)
        file.write(key + "\n")


async def revoke_key(store: Store, name: str) -> bool:
    return await store.revoke_api_key(name, datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))


async def set_budget(store: Store, name: str, budget: BucketPolicy | None) -> bool:
    """Give a key in force its own budget, or the configured one again (None)."""
    return await store.set_api_key_budget(name, None if budget is None else _budget_doc(budget))


async def authenticate(store: Store, authorization: str | None) -> Identity | None:
    """Who the request comes from: None without credentials, `InvalidCredentials` if bad."""
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise InvalidCredentials("Send the API key as `Authorization: Bearer <key>`.")
    parts = token.strip().split("_")
    if len(parts) != 3 or parts[0] != PREFIX:
        raise InvalidCredentials("The API key is malformed: keys read `alm_<id>_<secret>`.")
    _, key_id, secret = parts
    doc = await store.api_key(key_id)
    if doc is None or not hmac.compare_digest(doc["secret_sha256"], _digest(secret)):
        raise InvalidCredentials("The API key is not valid.")
    if doc["revoked_at"] is not None:
        raise InvalidCredentials("The API key was revoked.")
    budget = doc.get("budget")
    return Identity(
        name=doc["name"],
        scope=doc["scope"],
        budget=None if budget is None else BucketPolicy(**budget),
    )


def _budget_doc(budget: BucketPolicy) -> BudgetDoc:
    return {"capacity": budget.capacity, "restore_rate": budget.restore_rate}


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()
