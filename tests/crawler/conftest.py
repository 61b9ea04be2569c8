from ..tracker.conftest import ctx, settings  # noqa: F401 - the same fixtures as the tracker's tests
