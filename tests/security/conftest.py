"""The egress tests start from no allow list: the test session's own (tests/conftest.py, for
the fixture sites on loopback) is taken away, and a test allows what it means to."""
from __future__ import annotations

import pytest

from .servers import LoopbackServer


@pytest.fixture(autouse=True)
def _no_allow_list(monkeypatch):
    monkeypatch.delenv("FPT_FETCH_ALLOW", raising=False)
    monkeypatch.delenv("FPT_WEB_FETCH_PRIVATE", raising=False)


@pytest.fixture
def serve():
    """serve(handler) -> a LoopbackServer, closed after the test."""
    started: list[LoopbackServer] = []

    def start(handler, host: str = "127.0.0.1", tls=None) -> LoopbackServer:
        server = LoopbackServer(handler, host, tls)
        started.append(server)
        return server

    yield start
    for s in started:
        s.close()


# The admin's fixtures (a filled store, an app, signed-in clients, API tokens), for the attacks
# made through the web.
from tests.web.conftest import admin, app, client, settings, store, viewer  # noqa: F401
from tests.web.test_tokens import bearer, tokens  # noqa: F401
