"""Site identity ("top sub-domain", TSD) for the common-site filter and pair generation.

A URL's site is the registered domain under the public suffix list, private section
included, so ``foo.github.io`` and ``bar.github.io`` (or two ``blogspot.com`` blogs) are
different sites; ``www.bbc.co.uk`` and ``news.bbc.co.uk`` are both ``bbc.co.uk``.  IP
addresses and hosts without a public suffix (``localhost``, intranet names) are their own
site.  The suffix list is tldextract's bundled snapshot, read offline with no cache and
no lock, built lazily once per process.

On multi-tenant hosts the first path segment belongs to the site, otherwise every
GitHub-hosted hub page would share one site with every repository it lists: the site of
``https://github.com/sindresorhus/awesome`` is ``github.com/sindresorhus``.  The rules
are read from ``conf/sites.tsv`` at the repository root; where that folder is not present
(Hadoop tasks receive only the shipped packages) the identical built-in copy in this
module is used.  Owner and project names are lower-cased, because GitHub, GitLab,
Bitbucket, SourceForge and Medium treat them case-insensitively.
"""
from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import tldextract

from filters.config import conf_path
from filters.urls import HOST_CACHE_SIZE

logger = logging.getLogger(__name__)

#: Where the rules live: a checkout's conf/ or an installed wheel's (may be absent on a cluster).
SITE_RULES_PATH_DEFAULT = conf_path("sites.tsv")

# The same rules as conf/sites.tsv (tests/test_site.py keeps the two in sync).
_BUILTIN_SITE_RULES_TSV = """\
github.com\t/<owner>
gitlab.com\t/<owner>
bitbucket.org\t/<owner>
sourceforge.net\t/projects/<name>
medium.com\t/@<user>
sites.google.com\t/site/<name>
sites.google.com\t/view/<name>
"""

_RULE_HOST = re.compile(r"[a-z0-9_\-]+(?:\.[a-z0-9_\-]+)+")
_LITERAL_SEGMENT = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@]+")
_LAST_SEGMENT = re.compile(r"([A-Za-z0-9\-._~!$&'()*+,;=:@]*)<([a-z_]+)>")


@dataclass(frozen=True)
class SiteRule:
    """One multi-tenant host: ``host`` + literal path segments + ``<prefix><name>``.

    >>> rule = SiteRule("sourceforge.net", ("projects",), "", "name")
    >>> rule.site_for_path("/projects/Foo/files/")
    'sourceforge.net/projects/foo'
    >>> rule.site_for_path("/about") is None
    True
    """

    host: str
    literal_segments: tuple[str, ...]
    segment_prefix: str
    placeholder: str

    def site_for_path(self, path: str) -> str | None:
        """The site of a URL path on this host, or None when the path does not match."""
        segments = path.split("/", len(self.literal_segments) + 2)
        wanted = len(self.literal_segments) + 2  # "" before the first "/", literals, name
        if len(segments) < wanted:
            return None
        for literal, segment in zip(self.literal_segments, segments[1:]):
            if segment.lower() != literal:
                return None
        name = segments[wanted - 1]
        if len(name) <= len(self.segment_prefix) or not name.startswith(self.segment_prefix):
            return None
        prefix = "/".join((self.host, *self.literal_segments))
        return f"{prefix}/{name.lower()}"


def parse_site_rules(lines: Iterable[str], source: str = "<rules>") -> tuple[SiteRule, ...]:
    """Parse ``host<TAB>pattern`` lines; ValueError naming ``source`` and the line number.

    >>> parse_site_rules(["# comment", "", "medium.com\\t/@<user>"])
    (SiteRule(host='medium.com', literal_segments=(), segment_prefix='@', placeholder='user'),)
    >>> parse_site_rules(["github.com /<owner>"], "sites.tsv")
    Traceback (most recent call last):
    ...
    ValueError: sites.tsv:1: expected host<TAB>pattern, got 'github.com /<owner>'
    """
    rules: list[SiteRule] = []
    seen: dict[tuple[str, str], int] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{source}:{number}"
        fields_ = line.split("\t")
        if len(fields_) != 2:
            raise ValueError(f"{where}: expected host<TAB>pattern, got {line!r}")
        host, pattern = fields_[0].strip(), fields_[1].strip()
        if _RULE_HOST.fullmatch(host) is None:
            raise ValueError(f"{where}: invalid host {host!r} (lower-case host name expected)")
        if host.startswith("www."):
            raise ValueError(f"{where}: write the host without 'www.' ({host!r})")
        if (host, pattern) in seen:
            raise ValueError(f"{where}: duplicate rule (first on line {seen[host, pattern]})")
        seen[host, pattern] = number
        rules.append(_parse_pattern(host, pattern, where))
    return tuple(rules)


def _parse_pattern(host: str, pattern: str, where: str) -> SiteRule:
    if not pattern.startswith("/"):
        raise ValueError(f"{where}: pattern must start with '/': {pattern!r}")
    *literals, last = pattern[1:].split("/")
    for literal in literals:
        if _LITERAL_SEGMENT.fullmatch(literal) is None:
            raise ValueError(f"{where}: invalid literal segment {literal!r} in {pattern!r}")
    match = _LAST_SEGMENT.fullmatch(last)
    if match is None:
        raise ValueError(
            f"{where}: the last segment must be '<name>' or '<prefix><name>': {pattern!r}"
        )
    return SiteRule(host, tuple(s.lower() for s in literals), match.group(1), match.group(2))


def load_site_rules(path: str | os.PathLike[str]) -> tuple[SiteRule, ...]:
    """Read a rules file (UTF-8, format of ``conf/sites.tsv``)."""
    with open(path, encoding="utf-8") as handle:
        return parse_site_rules(handle, str(path))


def builtin_site_rules() -> tuple[SiteRule, ...]:
    """The rules built into this module (the same as the shipped ``conf/sites.tsv``)."""
    return parse_site_rules(_BUILTIN_SITE_RULES_TSV.splitlines(), "<built-in site rules>")


@dataclass(frozen=True)
class SiteIdentity:
    """Site identity with a fixed set of multi-tenant rules.

    >>> identity = SiteIdentity(builtin_site_rules())
    >>> identity.site_of("https://www.GitHub.com/Sindresorhus/awesome")
    'github.com/sindresorhus'
    >>> identity.site_of("https://news.bbc.co.uk/sport")
    'bbc.co.uk'
    """

    rules: tuple[SiteRule, ...] = ()
    _by_host: Mapping[str, tuple[SiteRule, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_host: dict[str, tuple[SiteRule, ...]] = {}
        for rule in self.rules:
            if rule in by_host.get(rule.host, ()):
                raise ValueError(f"duplicate site rule {rule!r}")
            by_host[rule.host] = by_host.get(rule.host, ()) + (rule,)
        object.__setattr__(self, "rules", tuple(self.rules))
        object.__setattr__(self, "_by_host", by_host)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> SiteIdentity:
        """Rules from a file; ValueError with the line number when it is invalid."""
        return cls(load_site_rules(path))

    def site_of(self, url: str) -> str:
        """The site of an absolute (normalised) http(s) URL; ValueError when it has no host."""
        host, path = _host_and_path(url)
        rules = self._by_host.get(host)
        if rules is None and host.startswith("www."):
            rules = self._by_host.get(host[4:])
        for rule in rules or ():  # first matching rule wins
            site = rule.site_for_path(path)
            if site is not None:
                return site
        return _registered_domain(host)


@functools.cache
def default_site_identity() -> SiteIdentity:
    """``conf/sites.tsv`` when present next to the package, else the built-in rules."""
    if SITE_RULES_PATH_DEFAULT.is_file():
        return SiteIdentity.from_file(SITE_RULES_PATH_DEFAULT)
    logger.info("%s not found: using the built-in site rules", SITE_RULES_PATH_DEFAULT)
    return SiteIdentity(builtin_site_rules())


def site_of(url: str, identity: SiteIdentity | None = None) -> str:
    """The site identity (TSD) of an absolute, normalised http(s) URL.

    ``identity`` defaults to :func:`default_site_identity`.  A URL without a host is a
    programming error (normalise hrefs first): ValueError.

    >>> site_of("https://github.com/sindresorhus/awesome")
    'github.com/sindresorhus'
    >>> site_of("https://sourceforge.net/projects/foo/files/")
    'sourceforge.net/projects/foo'
    >>> site_of("http://www.example.co.uk/a")
    'example.co.uk'
    >>> site_of("https://foo.github.io/x"), site_of("https://bar.blogspot.com/")
    ('foo.github.io', 'bar.blogspot.com')
    >>> site_of("http://127.0.0.1:8080/"), site_of("http://localhost/")
    ('127.0.0.1', 'localhost')
    """
    return (identity or default_site_identity()).site_of(url)


# ---------------------------------------------------------------------------------------


def split_authority(url: str) -> tuple[str, str, str]:
    """(scheme, authority, the rest) of an absolute URL; ValueError when not absolute.

    >>> split_authority("https://user@Example.com:8080/a?b#c")
    ('https', 'user@Example.com:8080', '/a?b#c')
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise ValueError(f"not an absolute URL: {url!r}")
    end = len(rest)
    for delimiter in "/?#":
        at = rest.find(delimiter)
        if 0 <= at < end:
            end = at
    return scheme, rest[:end], rest[end:]


def _host_and_path(url: str) -> tuple[str, str]:
    """Lower-case host (no userinfo, port or trailing dot) and path of an absolute URL."""
    _, authority, tail = split_authority(url)
    authority = authority.rpartition("@")[2]
    if authority.startswith("["):
        host = authority[: authority.find("]") + 1]
    else:
        host = authority.partition(":")[0]
    host = host.lower().rstrip(".")
    if not host:
        raise ValueError(f"no host in URL: {url!r}")
    path = tail
    for delimiter in "?#":
        path = path.partition(delimiter)[0]
    return host, path or "/"


@functools.cache
def _extractor() -> tldextract.TLDExtract:
    # Bundled snapshot only: no suffix-list download, no disk cache, no file lock.
    return tldextract.TLDExtract(
        suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True
    )


@functools.lru_cache(maxsize=HOST_CACHE_SIZE)
def _registered_domain(host: str) -> str:
    if host.startswith("["):  # IPv6 literal
        return host
    registered = _extractor().extract_str(host).top_domain_under_public_suffix
    # Empty for IP addresses, hosts without a public suffix and bare suffixes ("github.io").
    return registered or host
