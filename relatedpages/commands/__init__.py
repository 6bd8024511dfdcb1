"""The ``relatedpages`` subcommands, one module each (``relatedpages.cli`` keeps the parser
and ``main``); ``common`` holds what they share: exit codes and the usage error."""
