import pytest

from tracker.context import Context
from tracker.settings import Settings

from ..conftest import ROOT

SAMPLES = ROOT / "samples"


@pytest.fixture
def settings(tmp_path, monkeypatch):
    for var in ("FPT_MONGO_URL", "FPT_REDIS_URL", "FPT_BROKER_URL", "FPT_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FPT_HOME", str(tmp_path / "home"))
    return Settings.load()


@pytest.fixture
def ctx(settings):
    c = Context(settings)
    yield c
    c.close()
