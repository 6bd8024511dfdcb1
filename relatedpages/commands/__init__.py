"""The ``relatedpages`` subcommands, one module each with ``add_parser(commands)`` and
``run(args) -> exit status`` (``relatedpages.cli`` keeps the parser and ``main``); ``common``
holds what they share: exit codes, the usage error and the checks run before any work.
Nothing outside this package and ``cli`` imports it."""
