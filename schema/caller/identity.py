"""Who a request comes from, and what that lets it do."""

from dataclasses import dataclass

from api_errors import ApiError, ErrorCode
from request_limits import BucketPolicy


@dataclass(frozen=True)
class Identity:
    """Who a request comes from: the name and scope of the API key it carries."""

    name: str
    scope: str
    budget: BucketPolicy | None = None  # None: the configured key budget

    @property
    def is_admin(self) -> bool:
        return self.scope == "admin"


def admin_of(identity: Identity | None) -> Identity:
    """The identity, if it may change the almanac (an admin key); else why not."""
    if identity is None:
        raise ApiError(
            "Changes need an API key with the admin scope: send `Authorization: Bearer <key>`.",
            code=ErrorCode.UNAUTHENTICATED,
        )
    if not identity.is_admin:
        raise ApiError(
            f"The API key {identity.name!r} may read only; changes need admin scope.",
            code=ErrorCode.FORBIDDEN,
        )
    return identity


def key_of(identity: Identity | None) -> Identity:
    """The identity, if it is a key's (of any scope); else why not."""
    if identity is None:
        raise ApiError(
            "This needs an API key: send `Authorization: Bearer <key>`.",
            code=ErrorCode.UNAUTHENTICATED,
        )
    return identity


KEY_OWNED_MUTATIONS = frozenset(
    {
        "createWebhook",
        "updateWebhook",
        "deleteWebhook",
        "rotateWebhookSecret",
        "testWebhook",
        "redeliverWebhookEvent",
    }
)
"""The mutations any key may send: each acts on that key's own webhooks only."""
