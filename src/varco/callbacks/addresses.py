"""Which IP addresses a callback may connect to (SSRF safety, docs/callbacks.md).

Three classes. Never, whatever the settings say: unspecified, link-local (with the cloud metadata
services), multicast, broadcast, reserved. Loopback and private networks: only inside an allowed
network (VARCO_CALLBACK_ALLOWED_NETWORKS). Anything else (public unicast): always. Addresses that
carry an IPv4 address (IPv4-mapped, NAT64, 6to4, Teredo) are judged by that IPv4 address.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

IPAddress = IPv4Address | IPv6Address
Network = IPv4Network | IPv6Network


@dataclass(frozen=True)
class Refusal:
    """Why an address is refused; `always`: no allowed network can change that."""

    label: str
    always: bool


def _table(rows: list[tuple[str, str]]) -> list[tuple[Network, str]]:
    return [(ipaddress.ip_network(cidr), label) for cidr, label in rows]


# Checked in order: the first match names the reason (the metadata addresses before their ranges).
_NEVER = _table(
    [
        ("0.0.0.0/8", "unspecified address"),
        ("169.254.169.254/32", "link-local, the cloud metadata service"),
        ("169.254.0.0/16", "link-local"),
        ("100.100.100.200/32", "the Alibaba Cloud metadata service"),
        ("192.0.0.0/24", "reserved for IETF protocol assignments"),  # 192.0.0.192: Oracle Cloud metadata
        ("192.0.2.0/24", "reserved for documentation"),
        ("198.51.100.0/24", "reserved for documentation"),
        ("203.0.113.0/24", "reserved for documentation"),
        ("192.88.99.0/24", "reserved (6to4 relay anycast)"),
        ("224.0.0.0/4", "multicast"),
        ("255.255.255.255/32", "broadcast"),
        ("240.0.0.0/4", "reserved"),
        ("::/128", "unspecified address"),
        ("fd00:ec2::254/128", "the cloud metadata service (AWS)"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local (deprecated, reserved)"),
        ("ff00::/8", "multicast"),
        ("100::/64", "reserved (discard only)"),
        ("2001:db8::/32", "reserved for documentation"),
        ("3fff::/20", "reserved for documentation"),
    ]
)
_LISTED_ONLY = _table(
    [
        ("127.0.0.0/8", "loopback"),
        ("10.0.0.0/8", "private network"),
        ("172.16.0.0/12", "private network"),
        ("192.168.0.0/16", "private network"),
        ("100.64.0.0/10", "shared address space (carrier-grade NAT)"),
        ("198.18.0.0/15", "benchmarking network"),
        ("::1/128", "loopback"),
        ("fc00::/7", "unique local (private) network"),
    ]
)
_NAT64 = IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = IPv6Network("64:ff9b:1::/48")  # RFC 8215; judged as its /96 form
_SIX_TO_FOUR = IPv6Network("2002::/16")
_TEREDO = IPv6Network("2001::/32")


def refusal(address: IPAddress, allowed: Sequence[Network]) -> Refusal | None:
    """Why a callback may not connect to this address; None if it may."""
    ipv4 = _same_ipv4(address)
    found = _classify(ipv4 or address)
    if found is not None and ipv4 is not None:
        found = Refusal(f"IPv6 form of {ipv4}: {found.label}", found.always)
    if found is None or found.always:
        return found
    if any(a in network for a in (address, ipv4) if a is not None for network in allowed):
        return None
    return found


def _same_ipv4(address: IPAddress) -> IPv4Address | None:
    """The IPv4 address that an IPv6 one *is* on this host: mapped (::ffff:a.b.c.d), translated
    (::ffff:0:a.b.c.d) or compatible (::a.b.c.d, deprecated)."""
    if isinstance(address, IPv4Address):
        return None
    value = int(address)
    if value >> 32 in (0xFFFF, 0xFFFF0000) or (value >> 32 == 0 and value > 1):
        return IPv4Address(value & 0xFFFFFFFF)
    return None


def _classify(address: IPAddress) -> Refusal | None:
    if isinstance(address, IPv6Address) and (carrier := _carrier(address)) is not None:
        return _judge_carried(address, *carrier)
    for network, label in _NEVER:
        if address in network:
            return Refusal(label, always=True)
    for network, label in _LISTED_ONLY:
        if address in network:
            return Refusal(label, always=False)
    if isinstance(address, IPv6Address) and address.is_reserved:
        return Refusal("reserved", always=True)  # IANA: not allocated for unicast use
    if not address.is_global:
        return Refusal("not a public address", always=False)
    return None


def _carrier(address: IPv6Address) -> tuple[str, list[IPv4Address]] | None:
    """Addresses that a translator or relay elsewhere turns into IPv4 ones: which ones."""
    if address in _NAT64 or address in _NAT64_LOCAL:
        return "NAT64", [IPv4Address(int(address) & 0xFFFFFFFF)]
    if address in _SIX_TO_FOUR and address.sixtofour is not None:
        return "6to4", [address.sixtofour]
    if address in _TEREDO and address.teredo is not None:
        return "Teredo", list(address.teredo)  # server and client
    return None


def _judge_carried(address: IPv6Address, kind: str, carried: list[IPv4Address]) -> Refusal | None:
    """Judged by the IPv4 address carried. An allowed network exempts such an address only when
    it lists the IPv6 address itself (the operator's translator), never through the IPv4 one."""
    for ipv4 in carried:
        found = _classify(ipv4)
        if found is not None:
            return Refusal(f"{kind} address of {ipv4}: {found.label}", always=found.always)
    if address in _NAT64_LOCAL:
        return Refusal("local-use NAT64 prefix (64:ff9b:1::/48)", always=False)
    return None
