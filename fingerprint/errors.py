"""Errors the engine raises; each message names the problem and the fix."""


class FingerprintError(ValueError):
    """Base class for every error the engine raises on bad input or parameters."""


class InputError(FingerprintError):
    """An input (file, record, text) cannot be read or used."""


class ParameterError(FingerprintError):
    """A parameter is out of range or inconsistent."""


class IncompatibleFingerprints(FingerprintError):
    """Two fingerprints were made with different parameters and cannot be compared."""

    def __init__(self, what: str, left: object, right: object):
        super().__init__(
            f"cannot compare {what}: made with different parameters ({left!r} vs {right!r}); "
            "recompute both with the same settings"
        )
