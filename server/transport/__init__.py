"""The connection under the app: Uvicorn's HTTP protocol with what it lacks against slow and
oversized clients, and the drain on SIGTERM. Only the app, its lifespan and the command use
it."""

from server.transport.http_protocol import GuardedHttpToolsProtocol, raise_descriptor_limit
from server.transport.shutdown import Drain

__all__ = ["Drain", "GuardedHttpToolsProtocol", "raise_descriptor_limit"]
