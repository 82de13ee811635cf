"""newch's own error type."""


class NcError(RuntimeError):
    """Raised for memory-model violations: a freed tensor was used, or a memory limit was hit."""
