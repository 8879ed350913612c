"""The input error every layer raises (no imports: the claim model, the loader, the
running layer and the API all use it without depending on each other)."""


class UsageError(ValueError):
    """Bad input (a command-line option or an API argument): the message names the
    parameter and its allowed values; the command line prints it on one line, exit 2."""
