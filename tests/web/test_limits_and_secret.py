import os
import stat

from web.auth.limits import FailureLimiter
from web.auth.secret import FILE_NAME, secret_key


def test_limiter_blocks_after_max_failures_until_the_window_passes():
    now = [1000.0]
    lim = FailureLimiter(3, 60, clock=lambda: now[0])
    for _ in range(2):
        lim.fail("1.2.3.4")
    assert not lim.blocked("1.2.3.4")
    lim.fail("1.2.3.4")
    assert lim.blocked("1.2.3.4") and not lim.blocked("5.6.7.8")
    assert 0 < lim.retry_after("1.2.3.4") <= 61
    now[0] += 61
    assert not lim.blocked("1.2.3.4") and lim.retry_after("1.2.3.4") == 0


def test_secret_key_from_the_environment(tmp_path):
    assert secret_key(tmp_path, {"FPT_SECRET_KEY": "abc"}) == "abc"
    assert not (tmp_path / FILE_NAME).exists()


def test_secret_key_made_once_private_and_kept(tmp_path):
    home = tmp_path / "home"
    key = secret_key(home, {})
    path = home / FILE_NAME
    assert len(key) == 64 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert secret_key(home, {}) == key
    assert os.listdir(home) == [FILE_NAME]  # no temporary file left behind


def test_secret_key_file_made_private_if_it_was_not(tmp_path):
    path = tmp_path / FILE_NAME
    path.write_text("k" * 64)
    path.chmod(0o644)
    assert secret_key(tmp_path, {}) == "k" * 64
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
