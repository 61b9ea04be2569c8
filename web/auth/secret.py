"""The key that signs session cookies: FPT_SECRET_KEY, or one made once and kept in FPT_HOME."""
from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path

FILE_NAME = "web-secret-key"


def secret_key(home: Path, environ: Mapping[str, str] | None = None) -> str:
    """FPT_SECRET_KEY when set; else the key in home/web-secret-key, created (mode 0600) on first use,
    so sessions survive restarts and every process of one installation shares the key."""
    env = os.environ if environ is None else environ
    if env.get("FPT_SECRET_KEY"):
        return env["FPT_SECRET_KEY"]
    path = Path(home).expanduser() / FILE_NAME
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written in full under a temporary name, then linked into place: a process that starts
    # at the same moment sees either no file or the whole key, and the first link wins.
    tmp = path.with_name(f"{FILE_NAME}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(32))
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    return _read(path)


def _read(path: Path) -> str:
    key = path.read_text().strip()
    if not key:
        raise RuntimeError(f"the secret key file {path} is empty; delete it to make a new one, or set FPT_SECRET_KEY")
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o600)  # a key others can read lets them forge sessions
    return key
