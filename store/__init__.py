"""The only package that knows MongoDB: client, collections, indexes, queries and seed data.

Import what you need from its modules (`store.client`, `store.queries`, ...); this package
re-exports nothing, so that `resolvers` can use the document types without a cycle.
"""
