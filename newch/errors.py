"""newch's own error type."""


class NcError(RuntimeError):
    """Raised for memory-model violations: a freed tensor was used, or a memory limit was hit."""


class IntegerOverflow(RuntimeError, ValueError, OverflowError):
    """A Python number that does not fit the integer dtype it is written into.

    A ``RuntimeError``, and also a ``ValueError`` and an ``OverflowError``: PyTorch raises
    each of the three for one entry point or another (``tensor``, ``full``, ``fill_``), so
    a script's ``except`` clause catches it whichever it names.
    """


CONFORMANCE_DOC = "docs/conformance.md"


class NotProvided(AttributeError, NotImplementedError):
    """A PyTorch name newch does not provide yet.

    An ``AttributeError`` (so ``hasattr(torch, name)`` is simply False) and a
    ``NotImplementedError``; the message names what was asked for and where the
    supported list is.
    """

    def __init__(self, name):
        self.name = name
        super().__init__(f"{name}: newch does not provide this PyTorch name yet; the names newch "
                         f"supports are listed in {CONFORMANCE_DOC} "
                         f"(run `python -m newch.run --report SCRIPT` for a full report)")
