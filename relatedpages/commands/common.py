"""What every subcommand shares: exit statuses and the one-line usage error."""
from __future__ import annotations

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A command line that cannot be run; reported in one line with exit status 2."""
