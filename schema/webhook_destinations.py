"""Where a webhook may be sent: `https` only (unless allowed), and never to an address inside
the operator's network. The URL's host is resolved and every address it resolves to is checked,
at creation and again before each delivery, so a name that later resolves inside (DNS
rebinding) is refused then."""

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

METADATA_ADDRESSES = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)
"""The clouds' instance metadata services (credentials live there): refused even when private
addresses are allowed."""
MAX_URL_LENGTH = 2048


@dataclass(frozen=True)
class Destinations:
    """The rules a webhook's URL must meet (ALMANAC_WEBHOOK_ALLOW_HTTP, _ALLOW_PRIVATE)."""

    allow_http: bool = False
    allow_private: bool = False

    async def refusal(self, url: str) -> str | None:
        """Why a webhook may not be sent to `url` now; None if it may."""
        if len(url) > MAX_URL_LENGTH:
            return f"The URL is longer than {MAX_URL_LENGTH} characters."
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as error:
            return f"The URL does not parse ({error})."
        schemes = ("https", "http") if self.allow_http else ("https",)
        if parts.scheme not in schemes:
            return "The URL must use https." if not self.allow_http else "The URL must use http(s)."
        if not parts.hostname:
            return "The URL names no host."
        if parts.username is not None or parts.password is not None:
            return "The URL may not hold a user name or password: authenticate by the signature."
        host = parts.hostname
        try:
            found = await asyncio.get_running_loop().getaddrinfo(
                host, port or 443, type=socket.SOCK_STREAM
            )
        except (OSError, UnicodeError) as error:
            return f"The host {host} does not resolve ({error})."
        for *_, address in found:
            if (why := self.address_refusal(ipaddress.ip_address(address[0]))) is not None:
                return f"The host {host} resolves to {address[0]}, {why}."
        return None

    def address_refusal(self, address: IpAddress) -> str | None:
        """Why an address may not be sent to; None if it may."""
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if address in METADATA_ADDRESSES:
            return "a cloud metadata address: webhooks are never sent there"
        if self.allow_private:
            return None
        for kind, holds in (
            ("loopback", address.is_loopback),
            ("link-local", address.is_link_local),
            ("multicast", address.is_multicast),
            ("private", address.is_private),
            ("reserved", address.is_reserved or address.is_unspecified),
            ("non-public", not address.is_global),
        ):
            if holds:
                return f"a {kind} address: webhooks are sent only to public addresses"
        return None
