"""scripts/system-deps: the one place that installs the Debian packages the scripts need.

Run here with a package list of made-up commands, and with `id` and `apt-get`
replaced by recording stand-ins at the front of PATH, so that both the root
path (apt-get update once, then install) and the user path (one line naming
the command to run) are exercised without touching the machine's packages.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from .conftest import ROOT

SCRIPT = ROOT / "scripts" / "system-deps"

# apt-get waits for the dpkg lock as long as the script does (300 s by default)
UPDATE = "-o DPkg::Lock::Timeout=300 update"
INSTALL = "-o DPkg::Lock::Timeout=300 install -y --no-install-recommends "

LIST = """\
# command            package   used by     what for
fpt-missing-a        pkg-a     test         a test tool
fpt-missing-b        pkg-b     demo,bench   a demo tool
sh                   pkg-sh    test,demo    present everywhere
fpt-missing-a        pkg-a     bench        listed twice, installed once
"""


@pytest.fixture
def fake(tmp_path):
    """A bin folder with `id` and `apt-get` stand-ins; returns (run, calls file, bin folder)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "apt-calls"
    (tmp_path / "packages").write_text(LIST, encoding="utf-8")

    def tool(name: str, body: str) -> None:
        path = bin_dir / name
        path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
        path.chmod(0o755)

    def run(*groups: str, uid: int = 0, apt_fails: bool = False, strict: bool = False,
            lock_wait: int = 300) -> subprocess.CompletedProcess:
        tool("id", f"echo {uid}\n")
        # Installing pkg-X puts the command fpt-missing-X on PATH, as a real package would.
        tool("apt-get", f'echo "$*" >> {calls}\n'
                        + ("exit 100\n" if apt_fails else "")
                        + f'for a in "$@"; do case "$a" in pkg-*) n="${{a#pkg-}}"; '
                          f'printf "#!/bin/sh\\n" > {bin_dir}/fpt-missing-$n; chmod +x {bin_dir}/fpt-missing-$n;; esac; done\n')
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}",
               "FPT_SYSTEM_PACKAGES": str(tmp_path / "packages"), "FPT_SYSTEM_DEPS_LOG": str(tmp_path / "apt.log"),
               "FPT_SYSTEM_DEPS_STRICT": "1" if strict else "0",
               "FPT_DPKG_LOCK": str(tmp_path / "lock-frontend"), "FPT_DPKG_LOCK_WAIT": str(lock_wait)}
        return subprocess.run(["bash", str(SCRIPT), *groups], env=env, capture_output=True, text=True, timeout=60)

    return run, calls, bin_dir


def test_as_root_it_updates_once_installs_what_is_missing_and_says_so(fake):
    run, calls, bin_dir = fake
    done = run("test")
    assert done.returncode == 0, done.stderr
    assert calls.read_text().splitlines() == [UPDATE, INSTALL + "pkg-a"]
    assert "installing system packages: pkg-a" in done.stderr
    assert "installed system packages: pkg-a" in done.stderr
    assert (bin_dir / "fpt-missing-a").exists()


def test_a_second_run_installs_nothing(fake):
    run, calls, _ = fake
    run("test")
    again = run("test")
    assert again.returncode == 0
    assert calls.read_text().splitlines() == [UPDATE, INSTALL + "pkg-a"]  # no new calls
    assert again.stderr.strip() == "system packages for test: all present (pkg-a pkg-sh)"


def test_several_scripts_at_once_install_each_package_once(fake):
    run, calls, _ = fake
    done = run("demo", "bench")
    assert done.returncode == 0, done.stderr
    assert calls.read_text().splitlines() == [UPDATE, INSTALL + "pkg-b pkg-a"]


def test_not_root_it_names_the_command_and_goes_on(fake):
    run, calls, _ = fake
    done = run("test", "demo", uid=1000)
    assert done.returncode == 0
    assert not calls.exists()  # apt-get never ran
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("missing system packages: pkg-a pkg-b;")
    assert "sudo apt-get update && sudo apt-get install -y --no-install-recommends pkg-a pkg-b" in line
    assert "skip until then" in line


def test_a_failed_install_is_reported_and_does_not_stop_the_caller(fake):
    run, calls, _ = fake
    done = run("test", apt_fails=True)
    assert done.returncode == 0
    assert "could not install pkg-a" in done.stderr and "apt.log" in done.stderr


def test_a_script_with_nothing_listed_is_silent(fake, tmp_path):
    run, calls, _ = fake
    done = run("nothing-listed")
    assert (done.returncode, done.stderr, calls.exists()) == (0, "", False)


def test_without_a_script_name_it_says_how_to_call_it():
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "usage: scripts/system-deps" in done.stderr


def test_the_real_list_names_known_scripts_and_each_script_installs_its_packages():
    users = set()
    for line in (ROOT / "scripts" / "system-packages").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            command, package, used_by, *what = line.split()
            assert what, f"say what {package} is for: {line!r}"
            users |= set(used_by.split(","))
    assert users <= {"test", "demo", "bench", "crawl"}
    for script, group in (("test", "test"), ("demo", "demo"), ("bench", "bench")):
        text = (ROOT / "scripts" / script).read_text(encoding="utf-8")
        assert f"scripts/system-deps {group}" in text, f"scripts/{script} must install its system packages"


def test_strict_mode_fails_the_build_when_packages_cannot_be_had(fake):
    run, calls, _ = fake
    failed = run("test", apt_fails=True, strict=True)
    assert failed.returncode == 1 and "could not install pkg-a" in failed.stderr
    not_root = run("test", uid=1000, strict=True)
    assert not_root.returncode == 1 and "sudo apt-get install -y --no-install-recommends pkg-a" in not_root.stderr
    assert run("test", strict=True).returncode == 0  # installed: the build goes on


def test_the_docker_image_installs_the_crawlers_packages_from_the_same_list():
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "COPY scripts/system-deps scripts/system-packages ./scripts/" in dockerfile
    assert "FPT_SYSTEM_DEPS_STRICT=1" in dockerfile and "scripts/system-deps crawl" in dockerfile
    listed = [line.split() for line in (ROOT / "scripts" / "system-packages").read_text(encoding="utf-8").splitlines()
              if line.strip() and not line.startswith("#")]
    assert any(package == "chromium" and "crawl" in used_by.split(",") for _, package, used_by, *_ in listed)


def test_a_font_is_present_when_fontconfig_lists_one_for_its_language(fake, tmp_path):
    run, calls, bin_dir = fake
    (tmp_path / "packages").write_text("font:zz   pkg-font   test   a font of language zz\n", encoding="utf-8")
    # fc-list prints a font for :lang=zz only once the package is "installed" (a marker file)
    marker = tmp_path / "font-installed"
    (bin_dir / "fc-list").write_text(f'#!/bin/sh\n[ "$1" = ":lang=zz" ] && [ -e {marker} ] && echo "/f.ttc: Font"\n'
                                     "exit 0\n", encoding="utf-8")
    (bin_dir / "fc-list").chmod(0o755)
    not_root = run("test", uid=1000)
    assert "missing system packages: pkg-font" in not_root.stderr
    marker.write_text("")
    done = run("test", uid=1000)
    assert done.stderr.strip() == "system packages for test: all present (pkg-font)"
    assert not calls.exists()


def test_a_file_check_is_present_when_its_glob_matches_a_file(fake, tmp_path):
    run, calls, _ = fake
    data = tmp_path / "share" / "5" / "tessdata"
    (tmp_path / "packages").write_text(f"file:{tmp_path}/share/*/tessdata/zz.traineddata   pkg-data   test   "
                                       "a language's data\n", encoding="utf-8")
    assert "missing system packages: pkg-data" in run("test", uid=1000).stderr
    data.mkdir(parents=True)
    (data / "zz.traineddata").write_text("")
    assert run("test", uid=1000).stderr.strip() == "system packages for test: all present (pkg-data)"
    assert not calls.exists()


@pytest.fixture
def held_lock(tmp_path):
    """Hold the fake dpkg lock file open in another process, as a running apt-get does;
    returns a function that starts the holder for `seconds`."""
    holders = []

    def hold(seconds: float) -> subprocess.Popen:
        lock = tmp_path / "lock-frontend"
        lock.write_text("")
        holder = subprocess.Popen(["bash", "-c", f'exec 3<"{lock}"; sleep {seconds}'])
        holders.append(holder)
        deadline = time.monotonic() + 10
        while subprocess.run(["fuser", str(lock)], capture_output=True).returncode != 0:
            assert time.monotonic() < deadline, "the stand-in never held the lock"
            time.sleep(0.05)
        return holder

    yield hold
    for holder in holders:
        holder.kill()
        holder.wait()


needs_fuser = pytest.mark.skipif(shutil.which("fuser") is None, reason="fuser (psmisc) is not installed")


@needs_fuser
def test_it_waits_for_another_apt_get_holding_the_dpkg_lock_then_installs(fake, held_lock):
    run, calls, _ = fake
    holder = held_lock(2)
    started = time.monotonic()
    done = run("test")
    waited = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert waited >= 1.0  # it did not go ahead while the lock was held
    assert holder.poll() is not None  # the holder had finished before apt-get ran
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith(f"waiting for the dpkg lock: another apt-get or dpkg (pid {holder.pid}) holds ")
    assert lines[0].endswith("up to 300 s...")
    assert sum("waiting for the dpkg lock" in line for line in lines) == 1  # said once, not per poll
    assert calls.read_text().splitlines() == [UPDATE, INSTALL + "pkg-a"]
    assert "installed system packages: pkg-a" in done.stderr


@needs_fuser
def test_a_lock_held_too_long_is_one_line_and_apt_get_never_runs(fake, held_lock):
    run, calls, _ = fake
    holder = held_lock(60)
    done = run("test", lock_wait=2)
    assert done.returncode == 0  # never stops the calling script
    assert not calls.exists()
    assert holder.poll() is None  # still holding it
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("could not install pkg-a: the dpkg lock ") and "still held after 2 s" in last
    assert f"pid {holder.pid}" in last and "run the command again" in last
    strict = run("test", lock_wait=1, strict=True)
    assert strict.returncode == 1 and not calls.exists()

