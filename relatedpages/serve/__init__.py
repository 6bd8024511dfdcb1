"""The web part: ``relatedpages serve`` answers lookups over HTTP from the databases (and a
link index), swapping in a rebuilt database without a failed request (``sources``), with a
JSON API described by OpenAPI (``app``) on a multi-process production server (``server``).
Nothing below ``commands/`` imports it."""
