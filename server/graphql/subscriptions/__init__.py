"""Subscriptions: Strawberry's graphql-transport-ws and SSE handlers with the API's bounds (per
client, per send, idle). The slots that count a client's open streams (in this process, or in
Redis for every process) are a request limit: request_limits' `Slots`."""

__all__: list[str] = []
