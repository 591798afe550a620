"""Which internal addresses actions may call: SCHEDULER_PRIVATE_TARGETS, a comma-separated list of entries.

Pure rules (no I/O); shared/actions/network.py applies them to every address a target's name resolves to, before
any connection, for actions, their async polls and OAuth token requests alike.

"Internal" is everything not globally routable (private, loopback, link-local, CGNAT, unspecified, multicast,
documentation...), Azure's platform address 168.63.129.16, and any IPv6 address that embeds such an IPv4 address:
IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96), SIIT (::ffff:0:0:0/96), NAT64 (64:ff9b::/96; the local-use
64:ff9b:1::/48 is refused whole), 6to4 (2002::/16) and Teredo. An internal address is called only when an entry
allows it (an IPv6 form that wraps an IPv4 address is judged as that IPv4 address):

- `loopback`: 127.0.0.0/8 and ::1.
- `private`: the RFC 1918 ranges (10/8, 172.16/12, 192.168/16) and unique-local fc00::/7.
- a CIDR range (`100.64.0.0/10`, `fd00:1::/64`), an address (`10.0.0.5`, `[fd00::5]`), or an address and port
  (`10.0.0.5:8443`, `[fd00::5]:8443`).
- a host name (`hooks.internal`) or host name and port (`hooks.internal:8443`): a target with that host (and port)
  may resolve to internal addresses.

Link-local and cloud metadata addresses (169.254.0.0/16 with 169.254.169.254, fe80::/10, Azure's 168.63.129.16,
AWS's fd00:ec2::254, GCP's fd20:ce::254, Alibaba's 100.100.100.200, Oracle's 192.0.0.192) and the unspecified
address (0.0.0.0/8, ::, which reach this very host) are allowed only by an entry naming that exact address:
never through `private`, a range or a host name, so no list written for local work can reach a metadata service.
Empty (the default): no internal address at all.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

SETTING = "SCHEDULER_PRIVATE_TARGETS"
# The switch it replaces: `true` keeps meaning what it allowed for local work, never link-local or metadata.
LEGACY_SETTING = "SCHEDULER_ALLOW_PRIVATE_TARGETS"
LEGACY_MEANING = "loopback,private"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Beyond `is_global`: Azure's wire server / DNS / health probe address, and IETF protocol assignments
# that Python 3.11 still calls global.
_ALSO_INTERNAL = (
    ipaddress.ip_network("168.63.129.16/32"),
    ipaddress.ip_network("192.0.0.0/24"),
    ipaddress.ip_network("64:ff9b:1::/48"),  # RFC 8215 local-use NAT64: never globally routed
)
# IPv6 ranges whose low 32 bits are an IPv4 address.
_LOW_32_EMBEDS = (
    ipaddress.ip_network("::/96"),  # IPv4-compatible (deprecated)
    ipaddress.ip_network("::ffff:0:0:0/96"),  # SIIT IPv4-translated
    ipaddress.ip_network("64:ff9b::/96"),  # NAT64 well-known prefix
)
_LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
_PRIVATE = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"))
_UNSPECIFIED = (ipaddress.ip_network("0.0.0.0/8"), ipaddress.ip_network("::/128"))
_ONE_BY_ONE = (
    *_UNSPECIFIED,
    *(
        ipaddress.ip_network(n)
        for n in (
            "169.254.0.0/16",  # IPv4 link-local: the instance metadata address of most clouds
            "fe80::/10",
            "168.63.129.16/32",  # Azure's wire server
            "fd00:ec2::254/128",  # AWS instance metadata over IPv6
            "fd20:ce::254/128",  # GCP metadata over IPv6
            "100.100.100.200/32",  # Alibaba Cloud metadata
            "192.0.0.192/32",  # Oracle Cloud metadata
        )
    ),
)
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_HOST = re.compile(rf"(?=.{{1,253}}\Z){_LABEL}(?:\.{_LABEL})*", re.ASCII)


def _embedded(ip: IPAddress) -> Iterator[IPAddress]:
    yield ip
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            yield ip.ipv4_mapped
        if ip.sixtofour is not None:
            yield ip.sixtofour
        if ip.teredo is not None:
            yield from ip.teredo
        if _wraps_ipv4(ip):
            yield ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)


def _wraps_ipv4(ip: ipaddress.IPv6Address) -> bool:
    """Whether the low 32 bits are an IPv4 address: not so for :: and ::1, which are IPv6's own."""
    return int(ip) > 1 and any(ip in network for network in _LOW_32_EMBEDS)


def _internal(ip: IPAddress) -> bool:
    return not ip.is_global or ip.is_multicast or any(ip in network for network in _ALSO_INTERNAL)


def is_internal(address: str) -> bool:
    """True when `address` (an IP literal, optionally with an IPv6 zone) is, or embeds, an internal address."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    return any(_internal(candidate) for candidate in _embedded(ip))


def _unwrapped(ip: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 form only wraps (mapped, compatible, SIIT, NAT64): where a connection to it goes."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if _wraps_ipv4(ip):
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip


def _within(ip: IPAddress, networks: Iterable[IPNetwork]) -> bool:
    return any(ip in network for network in networks)


def _host_key(host: str) -> str:
    return host.strip("[]").lower().removesuffix(".")


def _literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class PrivateTargets:
    """The parsed list; `refusal` is the check. Equal lists compare equal whatever their order."""

    loopback: bool = False
    private: bool = False
    networks: frozenset[IPNetwork] = frozenset()
    addresses: frozenset[tuple[IPAddress, int | None]] = frozenset()  # named one by one, on any port (None)
    hosts: frozenset[tuple[str, int | None]] = frozenset()

    @classmethod
    def parse(cls, text: str) -> PrivateTargets:
        """The entries of `text`; ValueError naming the setting and the first entry not understood."""
        entries = [_entry(word) for word in (part.strip() for part in text.split(",")) if word]
        return cls(
            loopback=any(entry.loopback for entry in entries),
            private=any(entry.private for entry in entries),
            networks=frozenset().union(*(entry.networks for entry in entries)),
            addresses=frozenset().union(*(entry.addresses for entry in entries)),
            hosts=frozenset().union(*(entry.hosts for entry in entries)),
        )

    @classmethod
    def from_environment(cls, env: Mapping[str, str]) -> PrivateTargets:
        """SCHEDULER_PRIVATE_TARGETS; else the older switch SCHEDULER_ALLOW_PRIVATE_TARGETS (it may linger in a
        local.settings.json copied from an older sample), `true` meaning 'loopback,private'. ValueError for an entry
        not understood, a switch neither true nor false, or both set: one of them would go unapplied."""
        text = (env.get(SETTING) or "").strip()
        legacy = (env.get(LEGACY_SETTING) or "").strip().lower()
        if legacy and legacy not in _TRUE | _FALSE:
            raise ValueError(f"{LEGACY_SETTING} must be true or false; it is replaced by {SETTING}, a list of entries")
        if legacy and text:
            raise ValueError(
                f"{LEGACY_SETTING} and {SETTING} are both set: remove {LEGACY_SETTING} ({SETTING} replaces it)"
            )
        if not text and legacy in _TRUE:
            return cls.parse(LEGACY_MEANING)
        return cls.parse(text)

    def refusal(self, host: str, port: int, addresses: Iterable[str]) -> str | None:
        """None when every one of `addresses` (what `host` resolved to) may be called on `port`; else why not,
        naming the entry that would allow it. One address refused refuses the target whole."""
        name = _host_key(host)
        for address in addresses:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
            for candidate in _embedded(ip):
                if _internal(candidate):
                    judged = _unwrapped(candidate)
                    if not self._permits(name, port, judged):
                        return _refused(host, name, judged)
        return None

    def _permits(self, name: str, port: int, ip: IPAddress) -> bool:
        if (ip, None) in self.addresses or (ip, port) in self.addresses:
            return True
        if _within(ip, _ONE_BY_ONE):
            return False
        return (
            (name, None) in self.hosts
            or (name, port) in self.hosts
            or (self.loopback and _within(ip, _LOOPBACK))
            or (self.private and _within(ip, _PRIVATE))
            or _within(ip, self.networks)
        )


def _refused(host: str, name: str, ip: IPAddress) -> str:
    head = f"'{host}' resolves to an internal address"
    if _within(ip, _ONE_BY_ONE):
        kind = "unspecified" if _within(ip, _UNSPECIFIED) else "link-local or cloud metadata"
        return (
            f"{head} ({kind}), which {SETTING} allows only when it names it one by one: "
            f"the entry '{ip}' (never a range, 'private' or a host name)"
        )
    literal = _literal(name)
    if _within(ip, _LOOPBACK):
        head, entry = f"{head} (loopback)", "loopback"
    elif _within(ip, _PRIVATE):
        head, entry = f"{head} (private)", "private"
    else:  # a name's address is not told: the entry is the name
        entry = str(ip) if literal else name
    also = "" if literal or entry == name else f" (or '{name}')"
    return f"{head}; the entry '{entry}'{also} in {SETTING} allows it"


def _entry(word: str) -> PrivateTargets:
    """One entry alone."""
    refused = ValueError(
        f"{SETTING}: the entry '{word}' is not loopback, private, a CIDR range, an address, a host name, "
        "or an address or host name with :port"
    )
    if word.lower() in ("loopback", "private"):
        return PrivateTargets(loopback=word.lower() == "loopback", private=word.lower() == "private")
    if "/" in word:
        return _range(word, refused)
    if "%" in word:
        raise refused  # a zone: the address alone names it
    text, port = _split_port(word, refused)
    try:
        return PrivateTargets(addresses=frozenset({(_unwrapped(ipaddress.ip_address(text)), port)}))
    except ValueError:
        if word.startswith("["):
            raise refused from None
    return _host(text, port, refused)


def _range(word: str, refused: ValueError) -> PrivateTargets:
    """A CIDR entry: a range, or the one address of a /32 (/128)."""
    try:
        network = ipaddress.ip_network(word)  # strict: an address with bits past the prefix is a typo
    except ValueError:
        raise refused from None
    if network.num_addresses == 1:
        return PrivateTargets(addresses=frozenset({(_unwrapped(network.network_address), None)}))
    return PrivateTargets(networks=frozenset({network}))


def _split_port(word: str, refused: ValueError) -> tuple[str, int | None]:
    """(address or host name, port or None): `[v6]:port`, `v4:port`, `name:port`; a bare IPv6 address has no port."""
    if word.startswith("["):
        text, _, rest = word[1:].partition("]")
        return text, _port(rest, refused) if rest else None
    if word.count(":") == 1:
        text, _, rest = word.partition(":")
        return text, _port(":" + rest, refused)
    return word, None


def _host(text: str, port: int | None, refused: ValueError) -> PrivateTargets:
    name = text.lower().removesuffix(".")
    if not _HOST.fullmatch(name) or name.rsplit(".", 1)[-1].isdigit():  # all digits: an address, loosely spelt
        raise refused
    return PrivateTargets(hosts=frozenset({(name, port)}))


def _port(text: str, refused: ValueError) -> int:
    digits = text.removeprefix(":")
    if not text.startswith(":") or not digits.isascii() or not digits.isdigit() or not 1 <= int(digits) <= 65535:
        raise refused
    return int(digits)
