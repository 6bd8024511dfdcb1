"""URL normalisation: the "non-web scheme / unparsable" and "normalisation" link filters.

Every href of every page goes through :func:`classify_url`, which returns either the
canonical absolute URL or the :class:`UrlRejection` that a job counts.  The function is
pure, never raises for any ``str``, and is idempotent: feeding its output back in returns
the same string.

What is always done (RFC 3986 §6.2.2 syntax-based normalisation, plus the parsing
leniency of browsers, WHATWG URL Standard):

* leading/trailing C0 controls and spaces stripped, tabs and newlines removed inside;
* only ``http`` and ``https`` are web schemes, everything else is ``NON_WEB_SCHEME``;
* relative references resolved against ``base`` (RFC 3986 §5.2), ``\\`` read as ``/``
  in the authority and path, and any number of slashes after ``http:`` accepted;
* scheme and host lower-case; IDN hosts to punycode (IDNA 2008 with UTS #46 mapping,
  falling back to IDNA 2003 as browsers do); IPv4 hosts in dotted decimal, including
  the hex/octal/short forms browsers accept; IPv6 literals compressed; one trailing dot
  of the host removed; a host is otherwise labels of letters, digits, ``-`` and ``_``
  (at most 63 characters each, 253 in all), and one whose last label is a number must
  be a valid IPv4 address — anything else is ``UNPARSABLE``;
* userinfo (``user:password@``) dropped: it never identifies a different page, and
  credentials must not leak into link databases;
* default ports (http 80, https 443) removed, an empty port ignored;
* percent-encoding: hex digits upper-case (§6.2.2.1), escaped unreserved characters
  decoded (§6.2.2.2), characters that may not appear in a URI (space, quotes,
  ``<>[]{}|^`\\`` in the query, controls, non-ASCII) encoded as UTF-8 escapes, a ``%``
  that starts no escape encoded as ``%25``; existing escapes are never double-encoded;
* dot segments removed (§5.2.4, also after resolution; ``../`` past the root is dropped);
* an empty path becomes ``/`` (§6.2.3); the fragment is always dropped — it names a
  part of a page, never another page;
* an empty href and a fragment-only same-document reference (``#``, ``#top``) are
  ``EMPTY``: they never point to another page.

The switchable rules of Lee, Kim & Hong, "On URL normalization" (ICCSA 2005) are in
:class:`NormaliseOptions`.
"""
from __future__ import annotations

import functools
import ipaddress
import logging
import re
from dataclasses import dataclass, fields
from enum import Enum
from re import Match
from typing import NamedTuple
from urllib.parse import unquote_to_bytes

import idna

logger = logging.getLogger(__name__)

WEB_SCHEMES = frozenset({"http", "https"})
DEFAULT_PORTS = {"http": 80, "https": 443}

#: Directory-index page names removed by ``remove_default_index`` (compared lower-case).
DEFAULT_INDEX_NAMES = frozenset(
    {
        "index.html",
        "index.htm",
        "index.shtml",
        "index.xhtml",
        "index.php",
        "index.asp",
        "index.aspx",
        "index.jsp",
        "index.cfm",
        "default.html",
        "default.htm",
        "default.asp",
        "default.aspx",
    }
)


class UrlRejection(str, Enum):
    """Why an href gives no web page URL (each value is a job counter name)."""

    EMPTY = "empty_href"
    """Empty href or a fragment-only same-document reference (``#top``, RFC 3986 §4.4)."""
    NON_WEB_SCHEME = "non_web_scheme"
    """A scheme other than http/https: javascript:, mailto:, tel:, data:, ftp:, file: …"""
    UNPARSABLE = "unparsable_url"
    """No valid host or port, or a relative href without a usable base URL."""


@dataclass(frozen=True)
class NormaliseOptions:
    """Switchable normalisations after Lee, Kim & Hong (2005); RFC 3986 rules are always on.

    Each switch changes *which* URLs are taken to be the same page; all keep the output
    idempotent.

    remove_default_index (default True)
        ``/dir/index.html`` → ``/dir/`` for the names in :data:`DEFAULT_INDEX_NAMES`
        (case-insensitive).  The block co-citation paper's own example of
        normalisation: ``www.sina.com/index.html`` ≡ ``www.sina.com``.
    remove_empty_query (default True)
        ``/page?`` → ``/page``: a bare ``?`` carries no parameter (RFC 3986 §6.2.3
        leaves this to the scheme; HTTP servers treat both alike).
    remove_www (default False)
        ``www.example.com`` → ``example.com`` (leading ``www.`` labels, only while a
        dot remains).  Off: many sites serve different content on the two hosts.
    lowercase_path (default False)
        Path letters lower-case (escapes keep upper-case hex).  Right only for
        case-insensitive servers (IIS); off by default.
    remove_trailing_slash (default False)
        ``/dir/`` → ``/dir`` (the root ``/`` stays).  Off: the two differ for relative
        links and on many servers.
    sort_query (default False)
        Query parameters sorted as ``key=value`` strings, empty ones dropped.  Off:
        parameter order can matter to the application.
    """

    remove_default_index: bool = True
    remove_empty_query: bool = True
    remove_www: bool = False
    lowercase_path: bool = False
    remove_trailing_slash: bool = False
    sort_query: bool = False

    def __post_init__(self) -> None:
        for field in fields(self):
            if not isinstance(getattr(self, field.name), bool):
                raise ValueError(f"NormaliseOptions.{field.name} must be a bool")


NORMALISE_OPTIONS_DEFAULT = NormaliseOptions()
#: Alias of :data:`NORMALISE_OPTIONS_DEFAULT`.
DEFAULT_OPTIONS = NORMALISE_OPTIONS_DEFAULT
#: RFC 3986 normalisation only (every Lee et al. switch off); used for base URLs.
RFC_ONLY_OPTIONS = NormaliseOptions(remove_default_index=False, remove_empty_query=False)


class _Parts(NamedTuple):
    """An absolute web URL after RFC 3986 normalisation, before the optional rules."""

    scheme: str
    hostport: str  # host, or host:port for a non-default port
    path: str  # starts with "/"
    query: str | None  # None: no "?"


# ---------------------------------------------------------------------------------------
# Tables and patterns (compiled once at import: cheap, no I/O)

_C0_CONTROL_OR_SPACE = "".join(chr(i) for i in range(0x21))
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_AUTHORITY_END = re.compile(r"[/\\?#]")
_SLASHES = "/\\"

# RFC 3986 §2.3 unreserved characters, by byte value.
_UNRESERVED_BYTES = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)
_HEX_ESCAPE = tuple(f"%{i:02X}" for i in range(256))

# Characters that may stay literal: pchar and "/" (path), plus "?" (query), RFC 3986 §3.3-3.4.
_PATH_NEEDS_WORK = re.compile(r"[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]")
_QUERY_NEEDS_WORK = re.compile(r"[^A-Za-z0-9\-._~!$&'()*+,;=:@/?%]")
# A "%" that is not an upper-case escape of a reserved byte (lower-case hex, a stray "%",
# or an escaped unreserved character).
_BAD_ESCAPE = re.compile(
    r"%(?![0-9A-F]{2})|%(?:4[1-9A-F]|5[0-9A]|6[1-9A-F]|7[0-9A]|3[0-9]|2[DE]|5F|7E)"
)
_PATH_FIX = re.compile(r"%([0-9A-Fa-f]{2})?|[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]+")
_QUERY_FIX = re.compile(r"%([0-9A-Fa-f]{2})?|[^A-Za-z0-9\-._~!$&'()*+,;=:@/?%]+")
_DOT_SEGMENT = re.compile(r"(?:^|/)\.\.?(?:/|$)")
_UPPER_OUTSIDE_ESCAPES = re.compile(r"%[0-9A-F]{2}|[A-Z]+")

# An absolute URL whose every character may stay as it is (host still to be checked).
_CANONICAL = re.compile(
    r"(https?)://([a-z0-9_\-.]+(?::[0-9]+)?)"
    r"(/[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*)(\?[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*)?"
)

_HOSTNAME = re.compile(r"(?:[a-z0-9_\-]{1,63}\.)*[a-z0-9_\-]{1,63}")
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")
_IPV4_PART = re.compile(r"0x([0-9a-f]*)|(0[0-7]*)|([1-9][0-9]*)")
_IPV6_CHARS = re.compile(r"[0-9A-Fa-f:.]+")
_PORT = re.compile(r"[0-9]+")

#: Hosts remembered per process by the host caches here and in :mod:`filters.site`.  A task
#: meets a host's URLs close together (a page's links; a reducer's keys sorted by URL), and a
#: miss costs about 1 µs here and 3 µs in tldextract, so a small cache loses little; a large
#: one is a task's memory that grows with the crawl's hosts (at 65,536 hosts these caches
#: took about 40 MB, and a reducer's peak rose 1.20× from 31,250 to a million one-host pages;
#: 1.01× at 4,096, with the same CPU a page: README "Scale").
HOST_CACHE_SIZE = 1 << 12
_BASE_CACHE_SIZE = 1 << 10


# ---------------------------------------------------------------------------------------
# Public API


def classify_url(
    href: str,
    base: str | None = None,
    *,
    options: NormaliseOptions = NORMALISE_OPTIONS_DEFAULT,
) -> str | UrlRejection:
    """Return the normalised absolute URL of ``href``, or why it is not a web page URL.

    ``base`` is the URL of the citing page (or its ``<base href>``); relative hrefs
    without a base are :attr:`UrlRejection.UNPARSABLE`.  A :class:`UrlRejection` is
    also a ``str``: test the result with ``isinstance(result, UrlRejection)``.

    >>> classify_url("HTTP://Example.COM:80/a/./b/../c%7e?q=1#top")
    'http://example.com/a/c~?q=1'
    >>> classify_url("../img/../about.html", base="https://example.org/en/news/")
    'https://example.org/en/about.html'
    >>> classify_url("//cdn.example.net\\\\lib\\\\", base="https://example.org/")
    'https://cdn.example.net/lib/'
    >>> classify_url("http://bücher.de/Straße")
    'http://xn--bcher-kva.de/Stra%C3%9Fe'
    >>> classify_url("http://example.com/index.html")
    'http://example.com/'
    >>> classify_url("mailto:someone@example.com")
    <UrlRejection.NON_WEB_SCHEME: 'non_web_scheme'>
    >>> classify_url("http://example.com:99999/")
    <UrlRejection.UNPARSABLE: 'unparsable_url'>
    >>> classify_url("#section-2", base="https://example.org/")
    <UrlRejection.EMPTY: 'empty_href'>
    """
    match = _CANONICAL.fullmatch(href)
    if match is not None:
        # Fast path: an absolute URL already in RFC-normal form (no stray whitespace,
        # canonical host and port, no bad escapes, no dot segments) gives itself back
        # under the default options; the general path below would return the same.
        scheme, hostport, path, query = match.groups()
        if (
            _normalise_authority(scheme, hostport) == hostport
            and ("%" not in href or _BAD_ESCAPE.search(href) is None)
            and ("/." not in path or _DOT_SEGMENT.search(path) is None)
        ):
            if options is NORMALISE_OPTIONS_DEFAULT:
                last = path[path.rfind("/") + 1 :]
                if query != "?" and (not last or last.lower() not in DEFAULT_INDEX_NAMES):
                    return href
            return _serialise(_Parts(scheme, hostport, path, query and query[1:]), options)
    parts = _resolve(href, base)
    if isinstance(parts, UrlRejection):
        return parts
    return _serialise(parts, options)


def normalise_url(
    href: str,
    base: str | None = None,
    *,
    options: NormaliseOptions = NORMALISE_OPTIONS_DEFAULT,
) -> str | None:
    """Return the normalised absolute URL of ``href`` (see :func:`classify_url`), or None.

    >>> normalise_url("  https://WWW.Example.com/%7Euser/%c3%a9t%C3%A9 \\n")
    'https://www.example.com/~user/%C3%A9t%C3%A9'
    >>> normalise_url("https://www.example.com/a/", options=NormaliseOptions(
    ...     remove_www=True, remove_trailing_slash=True))
    'https://example.com/a'
    >>> normalise_url("javascript:void(0)") is None
    True
    >>> normalise_url("page2.html") is None  # relative, and no base
    True
    """
    result = classify_url(href, base, options=options)
    return None if isinstance(result, UrlRejection) else result


# ---------------------------------------------------------------------------------------
# Resolution (RFC 3986 §5.2 with WHATWG leniency for the special schemes http/https)


def _strip(href: str) -> str:
    href = href.strip(_C0_CONTROL_OR_SPACE)
    if "\t" in href or "\n" in href or "\r" in href:
        href = href.replace("\t", "").replace("\n", "").replace("\r", "")
    return href


def _resolve(href: str, base: str | None) -> _Parts | UrlRejection:
    ref = _strip(href)
    if not ref or ref[0] == "#":
        return UrlRejection.EMPTY
    match = _SCHEME.match(ref)
    if match is not None:
        scheme = match.group(1).lower()
        if scheme not in WEB_SCHEMES:
            return UrlRejection.NON_WEB_SCHEME
        rest = ref[match.end() :]
        if base is not None and not (len(rest) > 1 and rest[0] in _SLASHES and rest[1] in _SLASHES):
            # "http:page.html" is relative when the base has the same scheme (WHATWG).
            base_parts = _base_parts(base)
            if isinstance(base_parts, _Parts) and base_parts.scheme == scheme:
                if not rest or rest[0] == "#":
                    return UrlRejection.EMPTY
                return _resolve_relative(rest, base_parts)
        # Browsers accept any number of slashes or backslashes, even none: "http:example.com".
        return _parse_after_scheme(scheme, rest.lstrip(_SLASHES))
    if base is None:
        return UrlRejection.UNPARSABLE
    base_parts = _base_parts(base)
    if isinstance(base_parts, UrlRejection):
        return base_parts
    return _resolve_relative(ref, base_parts)


@functools.lru_cache(maxsize=_BASE_CACHE_SIZE)
def _base_parts(base: str) -> _Parts | UrlRejection:
    """The base URL, parsed once per page (all links of a page share it)."""
    parts = _resolve(base, None)
    if parts is UrlRejection.EMPTY:
        return UrlRejection.UNPARSABLE
    return parts


def _split_path_query(text: str) -> tuple[str, str | None]:
    hash_at = text.find("#")
    if hash_at >= 0:
        text = text[:hash_at]
    path, question, query = text.partition("?")
    return path, (query if question else None)


def _resolve_relative(ref: str, base: _Parts) -> _Parts | UrlRejection:
    """RFC 3986 §5.2.2 for a non-empty reference without scheme (fragments ignored)."""
    first = ref[0]
    if first in _SLASHES:
        if len(ref) > 1 and ref[1] in _SLASHES:  # network-path reference "//host/x"
            return _parse_after_scheme(base.scheme, ref.lstrip(_SLASHES))
        path, query = _split_path_query(ref)
        return _Parts(base.scheme, base.hostport, _normalise_path(path), _normalise_query(query))
    if first == "?":
        path, query = _split_path_query(ref)
        return _Parts(base.scheme, base.hostport, base.path, _normalise_query(query))
    path, query = _split_path_query(ref)
    # §5.2.3 merge: the base path up to its last "/", then the reference path.
    merged = base.path[: base.path.rfind("/") + 1] + path
    return _Parts(base.scheme, base.hostport, _normalise_path(merged), _normalise_query(query))


def _parse_after_scheme(scheme: str, text: str) -> _Parts | UrlRejection:
    """Parse ``authority [path] [?query] [#fragment]`` (the slashes already consumed)."""
    match = _AUTHORITY_END.search(text)
    if match is None:
        authority, rest = text, ""
    else:
        authority, rest = text[: match.start()], text[match.start() :]
    hostport = _normalise_authority(scheme, authority)
    if hostport is None:
        return UrlRejection.UNPARSABLE
    path, query = _split_path_query(rest)
    return _Parts(scheme, hostport, _normalise_path(path) if path else "/", _normalise_query(query))


# ---------------------------------------------------------------------------------------
# Authority: userinfo, host, port


@functools.lru_cache(maxsize=HOST_CACHE_SIZE)
def _normalise_authority(scheme: str, authority: str) -> str | None:
    """``host`` or ``host:port`` in canonical form, or None when invalid."""
    at = authority.rfind("@")
    if at >= 0:  # userinfo is dropped (see the module docstring)
        authority = authority[at + 1 :]
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            return None
        host = _normalise_ipv6(authority[1:end])
        after = authority[end + 1 :]
        if after and after[0] != ":":
            return None
        port_text = after[1:]
    else:
        host_text, _, port_text = authority.partition(":")
        host = _normalise_host(host_text)
    if host is None:
        return None
    if port_text:
        if _PORT.fullmatch(port_text) is None:
            return None
        port = int(port_text)
        if port > 65535:
            return None
        if port != DEFAULT_PORTS[scheme]:
            return f"{host}:{port}"
    return host


def _normalise_ipv6(text: str) -> str | None:
    # Zone identifiers ("%eth0") are not allowed in URLs by WHATWG: rejected.
    if _IPV6_CHARS.fullmatch(text) is None:
        return None
    try:
        return f"[{ipaddress.IPv6Address(text).compressed}]"
    except ValueError:
        return None


def _normalise_host(text: str) -> str | None:
    """A registered name or IPv4 address, lower-case ASCII, or None when invalid."""
    if "%" in text:
        decoded = _percent_decode(text)
        if decoded is None:
            return None
        text = decoded
    if text.isascii():
        host = text.lower()
    else:
        idna_host = _idna_to_ascii(text)
        if idna_host is None:
            return None
        host = idna_host
    if host.endswith("."):
        host = host[:-1]
    # WHATWG "ends in a number": such a host must be an IPv4 address.
    if _NUMERIC_LABEL.fullmatch(host.rpartition(".")[2]) is not None:
        return _normalise_ipv4(host)
    if len(host) > 253 or _HOSTNAME.fullmatch(host) is None:
        return None
    return host


def _percent_decode(text: str) -> str | None:
    """Percent-decode a host as UTF-8 (WHATWG host parser); None when that fails."""
    try:
        return unquote_to_bytes(text).decode("utf-8")
    except UnicodeError:  # lone surrogates in, or bytes that are not UTF-8 out
        return None


@functools.lru_cache(maxsize=HOST_CACHE_SIZE)
def _idna_to_ascii(host: str) -> str | None:
    """IDNA 2008 with UTS #46 mapping (non-transitional); IDNA 2003 when that fails.

    The fallback mirrors browsers, which accept names IDNA 2008 disallows (symbols and
    emoji such as ``☃.net``, labels with ``_``).  None when both fail.
    """
    try:
        return idna.encode(host, uts46=True).decode("ascii").lower()
    except (idna.IDNAError, UnicodeError, ValueError):
        pass
    try:
        return host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return None


def _normalise_ipv4(host: str) -> str | None:
    """WHATWG IPv4 parser: 1-4 parts, each decimal, octal (``0…``) or hex (``0x…``)."""
    parts = host.split(".")
    if len(parts) > 4:
        return None
    numbers: list[int] = []
    for part in parts:
        match = _IPV4_PART.fullmatch(part)
        if match is None:
            return None
        hex_digits, octal, decimal = match.groups()
        if hex_digits is not None:
            numbers.append(int(hex_digits, 16) if hex_digits else 0)
        elif octal is not None:
            numbers.append(int(octal, 8))
        else:
            numbers.append(int(decimal))
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    address = numbers[-1]
    for index, number in enumerate(numbers[:-1]):
        address += number << (8 * (3 - index))
    return str(ipaddress.IPv4Address(address))


# ---------------------------------------------------------------------------------------
# Path and query


def _fix_escape(match: Match[str]) -> str:
    text = match.group(0)
    if text[0] == "%":
        pair = match.group(1)
        if pair is None:
            return "%25"  # a "%" that starts no escape
        byte = int(pair, 16)
        if byte in _UNRESERVED_BYTES:
            return chr(byte)  # RFC 3986 §6.2.2.2
        return "%" + pair.upper()  # RFC 3986 §6.2.2.1
    # Lone surrogates cannot be UTF-8; "surrogatepass" keeps this total and deterministic.
    return "".join(_HEX_ESCAPE[b] for b in text.encode("utf-8", "surrogatepass"))


def _normalise_path(path: str) -> str:
    if "\\" in path:
        path = path.replace("\\", "/")
    if _PATH_NEEDS_WORK.search(path) is not None or (
        "%" in path and _BAD_ESCAPE.search(path) is not None
    ):
        path = _PATH_FIX.sub(_fix_escape, path)
    if "." in path and _DOT_SEGMENT.search(path) is not None:
        path = _remove_dot_segments(path)
    return path


def _normalise_query(query: str | None) -> str | None:
    if query is None:
        return None
    if _QUERY_NEEDS_WORK.search(query) is not None or (
        "%" in query and _BAD_ESCAPE.search(query) is not None
    ):
        query = _QUERY_FIX.sub(_fix_escape, query)
    return query


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 for an absolute path ("/…"); ".." at the root is dropped."""
    segments = path.split("/")
    output: list[str] = []
    for segment in segments[1:]:
        if segment == "..":
            if output:
                output.pop()
        elif segment != ".":
            output.append(segment)
    if segments[-1] in (".", ".."):
        output.append("")  # "/a/b/.." → "/a/", keep the trailing slash
    return "/" + "/".join(output)


# ---------------------------------------------------------------------------------------
# Optional rules and serialisation


def _serialise(parts: _Parts, options: NormaliseOptions) -> str:
    hostport, path, query = parts.hostport, parts.path, parts.query
    if options.remove_www:
        while hostport.startswith("www.") and "." in hostport[4:].partition(":")[0]:
            hostport = hostport[4:]
    if options.lowercase_path:
        path = _UPPER_OUTSIDE_ESCAPES.sub(_lower_unless_escape, path)
    if options.remove_default_index or options.remove_trailing_slash:
        path = _apply_path_rules(path, options)
    if query is not None:
        if options.sort_query:
            query = "&".join(sorted(p for p in query.split("&") if p))
        if not query and options.remove_empty_query:
            query = None
    url = parts.scheme + "://" + hostport + path
    return url if query is None else url + "?" + query


def _lower_unless_escape(match: Match[str]) -> str:
    text = match.group(0)
    return text if text[0] == "%" else text.lower()


def _apply_path_rules(path: str, options: NormaliseOptions) -> str:
    # Repeat to a fixed point: "/index.html/" → "/index.html" → "/" keeps output idempotent.
    while True:
        before = path
        if options.remove_default_index:
            head, _, last = path.rpartition("/")
            if last and last.lower() in DEFAULT_INDEX_NAMES:
                path = head + "/"
        if options.remove_trailing_slash and len(path) > 1 and path.endswith("/"):
            path = path.rstrip("/") or "/"
        if path == before:
            return path
