"""Types of the compiled scan's canonical-link fast path (``native_links.pyx``)."""

NOT_A_PAGE: object

def canonical_link(href: str, base: str) -> tuple[bool, str | None]: ...
