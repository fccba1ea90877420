"""GraphQL over HTTP and WebSockets: Strawberry's view (`AlmanacGraphQL`) with its admission
gate, persisted queries and trusted documents, GraphiQL, the published schema, and
subscriptions (graphql-transport-ws and SSE)."""

from server.graphql.graphiql import asset_endpoint
from server.graphql.persisted import (
    LocalDocuments,
    PersistedQueries,
    RedisDocuments,
    load_trusted_documents,
)
from server.graphql.published_schema import schema_file
from server.graphql.services import SharedServices
from server.graphql.view import AlmanacGraphQL

__all__ = [
    "AlmanacGraphQL",
    "LocalDocuments",
    "PersistedQueries",
    "RedisDocuments",
    "SharedServices",
    "asset_endpoint",
    "load_trusted_documents",
    "schema_file",
]
