"""Where a webhook may be sent: `https` only (unless allowed), and never to an address inside
the operator's network. The URL is read as the HTTP client reads it (httpx: a non-ASCII host in
IDNA 2008), its host resolved and every address it resolves to checked, at creation and again
before each attempt; the attempt connects to the address checked, with the host name for TLS
(SNI) and `Host`. So a name that resolves elsewhere by the time of the connection (DNS
rebinding), or that another encoding of it would resolve elsewhere, reaches nothing unchecked."""

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from typing import Any

import httpx

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

METADATA_ADDRESSES = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)
"""The clouds' instance metadata services (credentials live there): refused even when private
addresses are allowed, as is every link-local address (169.254.0.0/16, fe80::/10), where the
others live (169.254.170.2, say)."""
ENDING_IN_IPV4 = (
    ipaddress.ip_network("64:ff9b::/96"),  # NAT64's well-known prefix (RFC 6052)
    ipaddress.ip_network("::ffff:0:0:0/96"),  # IPv4-translated
    ipaddress.ip_network("::/96"),  # IPv4-compatible (deprecated; `::` and `::1` are their own)
)
"""IPv6 prefixes whose addresses reach the IPv4 address they end with. (NAT64's local-use
64:ff9b:1::/48 places it otherwise, and is refused as non-public.)"""
MAX_URL_LENGTH = 2048
MAX_PORT = 65_535


class Refused(Exception):
    """A webhook may not be sent to the URL (the message says why)."""


@dataclass(frozen=True)
class Target:
    """Where one attempt goes: the URL as the client sends it, and the address checked."""

    url: httpx.URL
    address: IpAddress

    @property
    def connect_url(self) -> httpx.URL:
        """The URL with the address checked in place of the host: the client connects there
        and resolves nothing."""
        return self.url.copy_with(host=str(self.address))

    @property
    def host(self) -> str:
        """The `Host` header: the URL's host (IDNA 2008) and port, as the client would send."""
        return self.url.netloc.decode("ascii")

    @property
    def extensions(self) -> dict[str, Any]:
        """The host name TLS verifies the certificate against (httpcore's `sni_hostname`)."""
        return {"sni_hostname": self.url.raw_host.decode("ascii")}


@dataclass(frozen=True)
class Destinations:
    """The rules a webhook's URL must meet (ALMANAC_WEBHOOK_ALLOW_HTTP, _ALLOW_PRIVATE)."""

    allow_http: bool = False
    allow_private: bool = False

    async def refusal(self, url: str) -> str | None:
        """Why a webhook may not be sent to `url` now; None if it may."""
        try:
            await self.target(url)
        except Refused as refused:
            return str(refused)
        return None

    async def target(self, url: str) -> Target:
        """Where a webhook to `url` is sent now, its host resolved and checked; Refused if it
        may not be."""
        parsed = self.parsed(url)
        host = parsed.raw_host.decode("ascii")  # as the client encodes it, and no other way
        try:
            found = await asyncio.get_running_loop().getaddrinfo(
                host, parsed.port or 443, type=socket.SOCK_STREAM
            )
        except (OSError, UnicodeError) as error:
            raise Refused(f"The host {host} does not resolve ({error}).") from None
        addresses = [ipaddress.ip_address(address[0]) for *_, address in found]
        for address in addresses:
            if (why := self.address_refusal(address)) is not None:
                # The address itself is not told: a refusal must not look up the operator's
                # names for whoever asks (a literal address is its own host).
                raise Refused(f"The host {host} resolves to {why}.")
        if not addresses:
            raise Refused(f"The host {host} resolves to no address.")
        return Target(parsed, addresses[0])

    def parsed(self, url: str) -> httpx.URL:
        """`url` read as the client reads it, if its form may be sent to."""
        if len(url) > MAX_URL_LENGTH:
            raise Refused(f"The URL is longer than {MAX_URL_LENGTH} characters.")
        try:
            parsed = httpx.URL(url)
        except httpx.InvalidURL as error:
            raise Refused(f"The URL does not parse ({error}).") from None
        schemes = ("https", "http") if self.allow_http else ("https",)
        if parsed.scheme not in schemes:
            raise Refused(f"The URL must use {'http(s)' if self.allow_http else 'https'}.")
        if not parsed.raw_host:
            raise Refused("The URL names no host.")
        if parsed.port is not None and not 0 < parsed.port <= MAX_PORT:
            raise Refused(f"The URL's port must be from 1 to {MAX_PORT}.")
        if parsed.userinfo:
            raise Refused(
                "The URL may not hold a user name or password: authenticate by the signature."
            )
        return parsed

    def address_refusal(self, address: IpAddress) -> str | None:
        """Why an address may not be sent to; None if it may."""
        address = reached(address)
        if address in METADATA_ADDRESSES or address.is_link_local:
            return "a cloud metadata or link-local address: webhooks are never sent there"
        if self.allow_private:
            return None
        site_local = isinstance(address, ipaddress.IPv6Address) and address.is_site_local
        for kind, holds in (
            ("loopback", address.is_loopback),
            ("multicast", address.is_multicast),
            ("private", address.is_private or site_local),
            ("reserved", address.is_reserved or address.is_unspecified),
            ("non-public", not address.is_global),
        ):
            if holds:
                return f"a {kind} address: webhooks are sent only to public addresses"
        return None


def reached(address: IpAddress) -> IpAddress:
    """The address a connection to `address` reaches: the IPv4 address an IPv6 one carries
    (IPv4-mapped, 6to4, NAT64, IPv4-compatible or -translated), else `address` itself."""
    if isinstance(address, ipaddress.IPv4Address):
        return address
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if int(address) > 1 and any(address in network for network in ENDING_IN_IPV4):
        return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    return address
