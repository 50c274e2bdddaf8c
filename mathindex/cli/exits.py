"""The command line's exit codes and its usage error (exit 2), shared by the parser and the verbs."""

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_GATE, EXIT_INTEGRITY, EXIT_BUSY = 0, 1, 2, 3, 4, 5


class UsageError(Exception):
    """Bad usage or a bad input path: exit 2."""
