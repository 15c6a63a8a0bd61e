"""§8.1 per-IP limits: which requests belong to which limited family, and who the client is.

Families are matched on method + path pattern, so they apply whether or not the route exists
yet (a 404 on a limited path still counts: it is still a request to that family).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache

from varco.settings import Settings

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class IpRule:
    family: str  # bucket name: one bucket per family and client IP
    method: str
    pattern: re.Pattern[str]
    setting: str  # the Settings field with the per-minute limit
    label: str  # for the 429 text


def _rule(family: str, method: str, pattern: str, setting: str, label: str) -> IpRule:
    return IpRule(family, method, re.compile(pattern), setting, label)


# §8.1 table. v1 and v2 paths of the same search share one bucket: the limit is per kind of
# search, whichever interface version asks (§9: limits tables are the same in both versions).
RULES: tuple[IpRule, ...] = (
    _rule("auth", "POST", r"/auth/signin/?", "auth_requests_per_minute", "authentication requests"),
    _rule("upload", "POST", r"/services/invoice/upload/?", "upload_requests_per_minute", "upload requests"),
    _rule(
        "upload-signed",
        "POST",
        r"/services/invoice/uploadSigned/?",
        "upload_signed_requests_per_minute",
        "uploadSigned requests",
    ),
    *(
        _rule(
            f"find-{d}",
            "GET",
            rf"/services/invoice/{d}/findByUsername/?|/api/v2/invoices-{d}/?",
            "find_requests_per_minute",
            f"searches of {what} invoices",
        )
        for d, what in (("out", "sent"), ("in", "received"))
    ),
    *(
        _rule(
            f"notifications-{d}",
            "GET",
            rf"/services/notification/{d}/.+|/api/v2/invoices-{d}/notifications(/.*)?",
            "find_requests_per_minute",
            f"searches of notifications on {what} invoices",
        )
        for d, what in (("out", "sent"), ("in", "received"))
    ),
)


def match(method: str, path: str) -> IpRule | None:
    for rule in RULES:
        if rule.method == method and rule.pattern.fullmatch(path):
            return rule
    return None


@lru_cache(maxsize=16)
def _networks(trusted: tuple[str, ...]) -> tuple[IpNetwork, ...]:
    networks = []
    for entry in (e.strip() for e in trusted if e.strip()):
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(
                f"VARCO_TRUSTED_PROXIES: {entry!r} is not an IP address or network "
                "(e.g. 10.0.0.1, 10.0.0.0/8)"
            ) from None
    return tuple(networks)


def check_trusted_proxies(settings: Settings) -> None:
    """Raise a clear ValueError for an invalid VARCO_TRUSTED_PROXIES entry (called at startup)."""
    _networks(tuple(settings.trusted_proxies))


def _is_trusted(address: str, networks: tuple[IpNetwork, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def is_trusted_proxy(peer: str, settings: Settings) -> bool:
    """Whether the peer is one of VARCO_TRUSTED_PROXIES (whose headers are believed)."""
    return _is_trusted(peer, _networks(tuple(settings.trusted_proxies)))


def client_ip(peer: str, forwarded_for: list[str], settings: Settings) -> str:
    """The client address: the peer, or, when the peer is a trusted proxy, the X-Forwarded-For hop
    it reports (walking right to left past further trusted proxies). Untrusted peers cannot spoof it."""
    networks = _networks(tuple(settings.trusted_proxies))
    if not networks or not forwarded_for:
        return peer
    hops = [hop.strip() for value in forwarded_for for hop in value.split(",") if hop.strip()]
    address = peer
    while hops and _is_trusted(address, networks):
        address = hops.pop()
    return address
