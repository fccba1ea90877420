"""The webhook destination rules (webhooks.destinations), each on its own, through a
resolver the test controls: which URLs, hosts and addresses are refused and in what words, and
where an allowed attempt connects."""

import pytest

from tests.fake_dns import Dns
from webhooks import Destinations, Refused
from webhooks.destinations import MAX_URL_LENGTH

STRICT = Destinations()
PRIVATE = Destinations(allow_http=True, allow_private=True)
PUBLIC = "93.184.215.14"


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> Dns:
    return Dns(monkeypatch)


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.0.1", "private"),
        ("fc00::1", "private"),
        ("::ffff:192.168.0.1", "private"),  # IPv4-mapped: the IPv4 address's rules
        ("::ffff:127.0.0.1", "loopback"),
        ("240.0.0.1", "private"),  # reserved too: private is said first
        ("0.0.0.0", "private"),
        ("::", "private"),
        ("4000::1", "reserved"),  # reserved, not private
        ("100.64.0.1", "non-public"),  # shared address space (carrier-grade NAT)
        ("100.127.255.254", "non-public"),
        ("192.0.2.1", "private"),  # documentation
        ("fec0::1", "private"),  # site-local (deprecated, still routed inside some networks)
        # IPv6 addresses reaching an IPv4 address inside: 6to4, NAT64, IPv4-translated and
        # IPv4-compatible, each of 127.0.0.1
        ("2002:7f00:1::", "loopback"),
        ("64:ff9b::7f00:1", "loopback"),
        ("::ffff:0:7f00:1", "loopback"),
        ("::7f00:1", "loopback"),
    ],
)
async def test_an_address_inside_is_refused(dns: Dns, address: str, kind: str) -> None:
    dns.answers = {"inside.test": [address]}
    refusal = await STRICT.refusal("https://inside.test/hook")
    expected = f"a {kind} address: webhooks are sent only to public addresses"
    # The address is not told: a refusal looks up no internal name for whoever asks.
    assert refusal == f"The host inside.test resolves to {expected}."
    assert await PRIVATE.refusal("https://inside.test/hook") is None  # allowed on a test rig


async def test_a_public_address_behind_6to4_is_allowed(dns: Dns) -> None:
    dns.answers = {"relay.test": ["2002:5db8:d70e::1"]}  # 93.184.215.14, public
    assert await STRICT.refusal("https://relay.test/hook") is None


@pytest.mark.parametrize(
    "address",
    [
        "169.254.169.254",
        "fd00:ec2::254",
        "::ffff:169.254.169.254",
        "169.254.170.2",  # a container's credentials (ECS)
        "169.254.1.1",
        "fe80::1",
        "fe80::a9fe:a9fe",
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
        "::ffff:0:a9fe:a9fe",  # IPv4-translated
        "::a9fe:a9fe",  # IPv4-compatible
        "2002:a9fe:a9fe::",  # 6to4
    ],
)
async def test_a_metadata_or_link_local_address_is_refused_even_with_private_ones_allowed(
    dns: Dns, address: str
) -> None:
    dns.answers = {"metadata.test": [address]}
    why = "a cloud metadata or link-local address: webhooks are never sent there"
    for rules in (STRICT, PRIVATE):
        refusal = await rules.refusal("https://metadata.test/latest")
        assert refusal == f"The host metadata.test resolves to {why}."


async def test_every_address_a_host_resolves_to_is_checked(dns: Dns) -> None:
    dns.answers = {"both.test": [[PUBLIC, "10.0.0.1"]]}
    refusal = await STRICT.refusal("https://both.test/hook")
    assert refusal is not None
    assert refusal.startswith("The host both.test resolves to a private address")


async def test_an_allowed_attempt_connects_to_the_address_checked(dns: Dns) -> None:
    dns.answers = {"xn--strae-oqa.test": [[PUBLIC, "2606:2800:220:1::1"]]}
    target = await STRICT.target("https://STRAßE.test:8443/hook?x=1")
    assert dns.asked == [("xn--strae-oqa.test", 8443)]  # the client's encoding, the URL's port
    assert str(target.connect_url) == f"https://{PUBLIC}:8443/hook?x=1"
    assert target.host == "xn--strae-oqa.test:8443"
    assert target.extensions == {"sni_hostname": "xn--strae-oqa.test"}
    dns.answers = {"example.test": ["2606:2800:220:1::1"]}
    target = await STRICT.target("https://example.test/hook")
    assert dns.asked[-1] == ("example.test", 443)  # https's port when the URL names none
    assert str(target.connect_url) == "https://[2606:2800:220:1::1]/hook"
    assert target.host == "example.test"


async def test_a_host_that_does_not_resolve_is_refused(dns: Dns) -> None:
    dns.answers = {"nothing.test": [[]]}
    assert await STRICT.refusal("https://nothing.test/") == (
        "The host nothing.test resolves to no address."
    )
    refusal = await STRICT.refusal("https://unknown.invalid/")
    assert refusal is not None
    assert refusal.startswith("The host unknown.invalid does not resolve (")


@pytest.mark.parametrize(
    ("url", "refusal"),
    [
        ("http://example.test/hook", "The URL must use https."),
        ("ftp://example.test/hook", "The URL must use https."),
        ("example.test/hook", "The URL must use https."),
        ("https:///hook", "The URL names no host."),
        ("https://example.test:0/hook", "The URL's port must be from 1 to 65535."),
        ("https://example.test:65536/hook", "The URL's port must be from 1 to 65535."),
        ("https://[::1/hook", "The URL does not parse (Invalid port: ':1')."),
    ],
)
async def test_a_url_of_the_wrong_form_is_refused(url: str, refusal: str) -> None:
    assert await STRICT.refusal(url) == refusal


@pytest.mark.parametrize(
    "url",
    [
        "https://user:pw@example.test/hook",
        "https://user@example.test/hook",  # a user name without a password
        "https://:pw@example.test/hook",
    ],
)
async def test_a_url_with_credentials_is_refused(url: str) -> None:
    assert await PRIVATE.refusal(url) == (
        "The URL may not hold a user name or password: authenticate by the signature."
    )


async def test_http_only_where_allowed(dns: Dns) -> None:
    dns.answers = {"example.test": [PUBLIC]}
    assert await STRICT.refusal("https://example.test:1/") is None  # the lowest port
    assert await Destinations(allow_http=True).refusal("http://example.test:65535/") is None
    assert await PRIVATE.refusal("ftp://example.test/") == "The URL must use http(s)."


async def test_a_url_up_to_the_longest_is_taken(dns: Dns) -> None:
    dns.answers = {"example.test": [PUBLIC]}
    start = "https://example.test/"
    longest = start + "x" * (MAX_URL_LENGTH - len(start))
    assert await STRICT.refusal(longest) is None
    assert await STRICT.refusal(longest + "x") == (
        f"The URL is longer than {MAX_URL_LENGTH} characters."
    )


async def test_a_refusal_is_raised_by_target() -> None:
    with pytest.raises(Refused, match="must use https"):
        await STRICT.target("http://example.test/")
