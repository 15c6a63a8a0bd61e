"""Which callback URLs are allowed (SSRF safety), checked at registration and again at each delivery.

Every profile: an http or https URL (https only in production) without control characters,
whitespace or credentials, whose host resolves only to addresses a callback may reach
(addresses.py): never link-local, metadata, unspecified, multicast or reserved ones; loopback and
private ones only inside the allowed networks (VARCO_CALLBACK_ALLOWED_NETWORKS; unset: loopback on
the demo profile, nothing in production). Deliveries connect to the checked addresses, so a DNS
answer that changes afterwards (rebinding) cannot redirect them.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import unicodedata
from dataclasses import dataclass
from urllib.parse import SplitResult, unquote, urlsplit

from varco.callbacks import addresses
from varco.callbacks.addresses import IPAddress, Network
from varco.core.errors import BadRequest
from varco.settings import Settings

MAX_URL_LENGTH = 2000
# The demo profile's allowed networks when the setting is unset: try callbacks on this machine.
DEMO_ALLOWED_NETWORKS: tuple[Network, ...] = (
    ipaddress.IPv4Network("127.0.0.0/8"),
    ipaddress.IPv6Network("::1/128"),
)
_HOST_NAME = re.compile(r"[a-z0-9._-]+")  # urlsplit lowercases the host
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")  # a last label like this makes the host an IPv4 address


class CallbackUrlRefused(BadRequest):
    """The callback URL is not allowed."""


class HostUnresolvable(CallbackUrlRefused):
    """The callback URL's host has no address (now)."""


@dataclass(frozen=True)
class Target:
    """Where a delivery connects: the checked addresses of the URL's host, in the resolver's order."""

    url: str
    host: str
    port: int
    addresses: tuple[str, ...]


def allowed_networks(settings: Settings) -> tuple[Network, ...]:
    """VARCO_CALLBACK_ALLOWED_NETWORKS; unset: loopback on the demo profile, none in production."""
    if settings.callback_allowed_networks is not None:
        return tuple(settings.callback_allowed_networks)
    return DEMO_ALLOWED_NETWORKS if settings.profile == "demo" else ()


def check_url(url: str, settings: Settings) -> str:
    """The URL (outer spaces removed) if it may be registered, else CallbackUrlRefused naming the reason."""
    url = url.strip()
    try:
        resolve(url, settings)
    except HostUnresolvable:
        if settings.profile == "production":
            raise
        # Demo: a name without an address yet (offline, receiver not deployed) is checked when sent.
    return url


def resolve(url: str, settings: Settings) -> Target:
    """Check the URL, resolve its host and check every address: where a delivery may connect."""
    parts = _parts(url, settings)
    host = _host(parts)
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    literal = _literal(host)
    found = [literal] if literal is not None else _resolve(host, port)
    # 2130706433, 0x7f.1, 127.1: checked as the address they denote, then refused (parsers disagree)
    odd = isinstance(literal, ipaddress.IPv4Address) and str(literal) != host
    allowed = allowed_networks(settings)
    for address in found:
        refused = addresses.refusal(address, allowed)
        if refused is not None:
            raise CallbackUrlRefused(_refused_message(host, address, odd, refused, settings))
    if odd:
        raise CallbackUrlRefused(f"url host {host!r} denotes {literal}: write the address as {literal}")
    return Target(url=url, host=host, port=port, addresses=tuple(str(a) for a in found))


def _parts(url: str, settings: Settings) -> SplitResult:
    if not url:
        raise CallbackUrlRefused("url is required")
    if len(url) > MAX_URL_LENGTH:
        raise CallbackUrlRefused(f"url is longer than {MAX_URL_LENGTH} characters")
    # Before urlsplit, which silently drops tabs and line breaks (the stored URL would keep them).
    _refuse_controls(url, "url")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise CallbackUrlRefused(f"url is not a valid URL ({exc}): {url!r}") from None
    production = settings.profile == "production"
    if parts.scheme.lower() not in (("https",) if production else ("http", "https")):
        only = "https only in production" if production else "http or https"
        raise CallbackUrlRefused(f"url must be an absolute {only} URL: got {url!r}")
    if not parts.hostname:
        raise CallbackUrlRefused(f"url has no host: {url!r}")
    if "@" in parts.netloc:
        raise CallbackUrlRefused("url must not carry credentials: verify the Varco-Signature header instead")
    if parts.fragment:
        raise CallbackUrlRefused("url must not have a #fragment")
    try:
        parts.port  # noqa: B018 - raises on a port out of range
    except ValueError:
        raise CallbackUrlRefused(f"url has an invalid port: {url!r}") from None
    return parts


def _refuse_controls(text: str, what: str) -> None:
    for position, char in enumerate(text):
        if char <= " " or unicodedata.category(char)[0] in "CZ":  # controls, format, spaces, separators
            raise CallbackUrlRefused(
                f"{what} must not contain control characters or whitespace: U+{ord(char):04X} at position "
                f"{position}"
            )


def _host(parts: SplitResult) -> str:
    host = parts.hostname or ""
    _refuse_controls(unquote(host), "url host (percent-decoded)")
    if "%" in host:
        raise CallbackUrlRefused(f"url host must not be percent-encoded: {host!r}")
    if ":" in host:
        return host  # an IPv6 literal: checked by _literal
    if not host.isascii():
        raise CallbackUrlRefused(f"url host must be ASCII: write {host!r} in its xn-- (punycode) form")
    if not _HOST_NAME.fullmatch(host):
        raise CallbackUrlRefused(f"url host has characters a host name cannot have: {host!r}")
    return host


def _literal(host: str) -> IPAddress | None:
    """The address a host written as one denotes, in any form an IPv4 parser accepts (inet_aton:
    2130706433, 0x7f.1, 0177.0.0.1, 127.1); None for a name."""
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host)
        except ValueError:
            raise CallbackUrlRefused(f"url host is not a valid IPv6 address: {host!r}") from None
    labels = host.split(".")
    last = labels[-1] or (labels[-2] if len(labels) > 1 else "")
    if not _NUMERIC_LABEL.fullmatch(last):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        raise CallbackUrlRefused(f"url host {host!r} is neither a host name nor an IPv4 address") from None


def _resolve(host: str, port: int) -> list[IPAddress]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise HostUnresolvable(f"url host {host!r} cannot be resolved: {exc}") from None
    found = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
    if not found:
        raise HostUnresolvable(f"url host {host!r} has no address")
    return list(dict.fromkeys(found))


def _refused_message(
    host: str, address: IPAddress, odd: bool, refused: addresses.Refusal, settings: Settings
) -> str:
    scope = " in production" if settings.profile == "production" else ""
    why = f"callbacks must reach a public address{scope}"
    if refused.always:
        why += ", and VARCO_CALLBACK_ALLOWED_NETWORKS cannot allow it"
    else:
        why += " unless VARCO_CALLBACK_ALLOWED_NETWORKS lists it"
    verb = "denotes" if odd else "resolves to"
    return f"url host {host!r} {verb} {address}, refused ({refused.label}): {why}"
