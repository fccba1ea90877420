"""A resolver the tests control: socket.getaddrinfo replaced (the event loop, the destination
check and the HTTP client all resolve through it), answering for the test's names as the
system's resolver would, and every other name as the system does."""

import ipaddress
import socket
from typing import Any

import pytest


class Dns:
    """The answers for some names. A non-ASCII name is looked up as the system encodes it
    (Python's `idna` codec: IDNA 2003). Each lookup of a name takes its next answer (the last
    one repeated); an answer is one address or several."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.answers: dict[str, list[str | list[str]]] = {}
        self.asked: list[tuple[str, int]] = []  # the lookups of the test's names
        self.system = socket.getaddrinfo
        monkeypatch.setattr(socket, "getaddrinfo", self.getaddrinfo)

    def getaddrinfo(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host).encode("idna").decode()
        answers = self.answers.get(name)
        if answers is None:
            return self.system(host, port, *args, **kwargs)
        self.asked.append((name, int(port)))
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        addresses = [answer] if isinstance(answer, str) else answer
        return [entry(address, int(port)) for address in addresses]


def entry(address: str, port: int) -> tuple[Any, ...]:
    if ipaddress.ip_address(address).version == 6:
        return (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0))
    return (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))
