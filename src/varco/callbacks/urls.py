"""Which callback URLs are allowed (SSRF safety), checked at registration and again at each delivery.

Demo profile: http or https, any host (so users can try callbacks on localhost). Production: https
only, and every address the host resolves to must be public (not private, loopback, link-local,
shared, reserved or multicast) unless inside VARCO_CALLBACK_ALLOWED_NETWORKS. Deliveries connect
to the address that was checked (DNS rebinding cannot swap it for an internal one afterwards).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from varco.core.errors import BadRequest
from varco.settings import Settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
MAX_URL_LENGTH = 2000


class CallbackUrlRefused(BadRequest):
    """The callback URL is not allowed."""


@dataclass(frozen=True)
class Target:
    """Where to connect: the URL, and in production the checked address to connect to."""

    url: str
    host: str
    port: int
    address: str | None  # None: connect by name (demo profile)


def check_url(url: str, settings: Settings) -> str:
    """The URL as given if allowed for registration, else CallbackUrlRefused naming the reason."""
    url = url.strip()
    if not url:
        raise CallbackUrlRefused("url is required")
    if len(url) > MAX_URL_LENGTH:
        raise CallbackUrlRefused(f"url is longer than {MAX_URL_LENGTH} characters")
    parts = urlsplit(url)
    production = settings.profile == "production"
    allowed = ("https",) if production else ("http", "https")
    if parts.scheme.lower() not in allowed:
        only = "https only in production" if production else "http or https"
        raise CallbackUrlRefused(f"url must be an absolute {only} URL: got {url!r}")
    if not parts.hostname:
        raise CallbackUrlRefused(f"url has no host: {url!r}")
    if parts.username is not None or parts.password is not None:
        raise CallbackUrlRefused("url must not carry credentials: verify the Varco-Signature header instead")
    if parts.fragment:
        raise CallbackUrlRefused("url must not have a #fragment")
    try:
        parts.port  # noqa: B018 - raises on a port out of range
    except ValueError:
        raise CallbackUrlRefused(f"url has an invalid port: {url!r}") from None
    resolve(url, settings)
    return url


def resolve(url: str, settings: Settings) -> Target:
    """Resolve and check the host (production); the Target says where a delivery connects."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    if settings.profile != "production":
        return Target(url=url, host=host, port=port, address=None)
    addresses = _addresses(host, port)
    for address in addresses:
        if not _public(address, settings):
            raise CallbackUrlRefused(
                f"url host {host!r} resolves to {address}, a private, loopback, link-local or reserved "
                "address: callbacks must reach a public address in production"
            )
    return Target(url=url, host=host, port=port, address=str(addresses[0]))


def _addresses(host: str, port: int) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise CallbackUrlRefused(f"url host {host!r} cannot be resolved: {exc}") from None
    found = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
    if not found:
        raise CallbackUrlRefused(f"url host {host!r} has no address")
    return list(dict.fromkeys(found))


def _public(address: IPAddress, settings: Settings) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # ::ffff:127.0.0.1 is loopback
    for network in settings.callback_allowed_networks:
        if address in ipaddress.ip_network(network, strict=False):
            return True
    return address.is_global and not address.is_multicast
