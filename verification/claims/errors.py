"""The input errors every layer raises (no imports: the claim model, the loader, the
registry, the running layer and the API all use them without depending on each other)."""


class UsageError(ValueError):
    """Bad input (a command-line option or an API argument): the message names the
    parameter and its allowed values; the command line prints it on one line, exit 2."""


class ClaimDefinitionError(UsageError):
    """A field of a :class:`~.model.Claim`, :class:`~.model.Check` or
    :class:`~.model.Prediction` outside its allowed values (a rate that is not finite and
    positive, an unordered rate range, a negative tolerance, an unknown status): raised
    when the object is constructed, the message naming the field and its range."""


class ClaimTypeError(ClaimDefinitionError, TypeError):
    """A field of a claim object of the wrong type (a ``TypeError`` and a
    :class:`UsageError`, so the command line reports it on one line, exit 2)."""


class UnknownClaimError(KeyError):
    """A claim id the registry does not hold (:meth:`..registry.core.Registry.get`); the
    message names the known claims."""

    def __str__(self) -> str:  # KeyError quotes its message; this one reads as a sentence
        return str(self.args[0])
