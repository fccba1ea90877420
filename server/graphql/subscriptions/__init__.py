"""Subscriptions: Strawberry's graphql-transport-ws and SSE handlers with the API's bounds (per
client, per send, idle), and the slots that count a client's open streams (in this process, or
in Redis for every process)."""

from server.graphql.subscriptions.slots import AllTaken, LocalSlots, RedisSlots, Slots

__all__ = ["AllTaken", "LocalSlots", "RedisSlots", "Slots"]
