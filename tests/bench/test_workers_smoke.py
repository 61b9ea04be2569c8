"""bench/workers.py: what it calls identical, and the message when a service is missing."""
from __future__ import annotations

import pytest

from bench import workers
from bench.common import BenchError

from ..conftest import need, redis_url


def outcome(label="run", **changes) -> workers.Outcome:
    o = workers.Outcome(label, 2, 1.0)
    o.statuses = {"a": "done", "b": "failed"}
    o.matches = {("a", "w/1", "duplicate"): (0.9, 0.95, 0.9, (("winnow", 0.9),))}
    for k, v in changes.items():
        setattr(o, k, v)
    return o


def test_identical_runs_have_no_differences():
    assert outcome().differences(outcome("ref")) == []


@pytest.mark.parametrize("changes, words", [
    ({"statuses": {"a": "done", "b": "done"}}, "1 page outcomes differ"),
    ({"matches": {}}, "0 matches more and 1 fewer"),
    ({"matches": {("a", "w/1", "excerpt"): (0.9, 0.95, 0.9, (("winnow", 0.9),))}}, "1 matches more and 1 fewer"),
    ({"matches": {("a", "w/1", "duplicate"): (0.9, 0.95, 0.9, (("winnow", 0.9000001),))}}, "1 matches scored"),
])
def test_any_change_in_outcomes_matches_or_scores_is_a_difference(changes, words):
    [diff] = outcome(**changes).differences(outcome("ref"))
    assert words in diff


def test_a_missing_service_is_one_message():
    with pytest.raises(BenchError, match="no Redis at redis://127.0.0.1:1/0 .*start redis-server"):
        workers.check_services("amqp://127.0.0.1:1//", "redis://127.0.0.1:1/0")
    import redis

    url = redis_url(0)
    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except redis.RedisError as e:
        need(False, f"no Redis at {url} ({e})")
    with pytest.raises(BenchError, match="no broker at amqp://127.0.0.1:1//.*start RabbitMQ"):
        workers.check_services("amqp://127.0.0.1:1//", url)
