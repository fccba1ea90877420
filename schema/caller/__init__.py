"""The caller: who a request comes from and what that lets it do, and which answers are the
caller's own (never another's, never shared by a cache)."""

from schema.caller.identity import KEY_OWNED_MUTATIONS, Identity, admin_of, key_of
from schema.caller.per_caller import PER_CALLER, callers_fields, selects_callers_own

__all__ = [
    "KEY_OWNED_MUTATIONS",
    "PER_CALLER",
    "Identity",
    "admin_of",
    "callers_fields",
    "key_of",
    "selects_callers_own",
]
