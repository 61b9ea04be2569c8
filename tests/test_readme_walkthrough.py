"""The README's "Track your own novel" walk-through, run as written.

The shell block between `<!-- walkthrough -->` and `<!-- /walkthrough -->` runs in bash
in a fresh folder (with the checkout's samples/, scripts/ and .venv linked in) and a
fresh FPT_HOME; only the sample site's port is changed, to a free one. Each step's
result is checked: the novel registered, a match found on the site, the notice
written for the confirmed copy, the follow-up's re-check. The block's output with each
command before it (`transcript`) is what the README shows under "What it prints".
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT, need

README = ROOT / "README.md"
PORT = "8766"  # the sample site's port as the README writes it


def section(text: str, name: str) -> str:
    """The fenced block between <!-- name --> and <!-- /name -->."""
    m = re.search(rf"<!-- {name} -->\n```[a-z]*\n(.*?)```\n<!-- /{name} -->", text, re.S)
    assert m, f"README.md has no fenced block between <!-- {name} --> and <!-- /{name} -->"
    return m.group(1)


def free_port() -> int:
    """A free port with as many digits as the README's, so that the tables line up as shown."""
    for port in range(int(PORT), 10_000):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError(f"no free port from {PORT} to 9999 on 127.0.0.1")


def transcript_script(block: str) -> str:
    """The block with each command echoed after `$ `, as a terminal session shows it."""
    out = []
    for line in block.splitlines():
        if not line.strip():
            continue
        quoted = "'" + line.rstrip().replace("'", "'\\''") + "'"
        out.append(f"printf '$ %s\\n' {quoted}")
        out.append(line)
    return "\n".join(out) + "\n"


def run_walkthrough(folder: Path, port: int) -> subprocess.CompletedProcess:
    """Run the README's block in `folder` (a fresh FPT_HOME inside it) with the sample site on `port`."""
    block = section(README.read_text(encoding="utf-8"), "walkthrough")
    assert PORT in block, f"the walk-through's sample site is on port {PORT}"
    for name in ("samples", "scripts", ".venv"):
        (folder / name).symlink_to(ROOT / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FPT_")}
    env.update(FPT_HOME=str(folder / "home"), PATH=f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}",
               PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(["bash", "-c", transcript_script(block.replace(PORT, str(port)))], cwd=folder,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)  # the sample site it starts is in this group too
    try:
        out, _ = proc.communicate(timeout=600)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)  # the sample site, left running as the README says
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, "")


@pytest.fixture(scope="module")
def walked(tmp_path_factory):
    if not (ROOT / ".venv" / "bin" / "fptrack").exists():
        pytest.fail("no .venv/bin/fptrack: run scripts/bootstrap first")
    need(shutil.which("unzip") is not None,
         "unzip is not installed (the walk-through reads the notice with it): apt-get install unzip (scripts/test does it)")
    folder = tmp_path_factory.mktemp("walkthrough")
    port = free_port()
    done = run_walkthrough(folder, port)
    return done, folder, f"http://127.0.0.1:{port}/"


def test_the_walkthrough_runs_to_the_end(walked):
    done, _, _ = walked
    assert done.returncode == 0, done.stdout[-3000:]
    assert "Traceback" not in done.stdout, done.stdout


def test_the_novel_is_registered_and_the_site_added(walked):
    done, folder, site = walked
    assert "山城旧事: 3 chapters (3 new, 0 changed, 0 unchanged)" in done.stdout
    assert f"sample pirate site on {site}" in done.stdout
    assert "site pirate: 1 start URL," in done.stdout
    assert (folder / "home").is_dir() and (folder / "novel.txt").is_file()  # all in the fresh folder


def test_the_crawl_finds_copies_and_the_report_shows_every_chapter_copied(walked):
    done, _, site = walked
    header = next(line for line in done.stdout.splitlines() if line.startswith("site ") and "matched" in line)
    row = next(line for line in done.stdout.splitlines() if line.startswith("pirate "))
    counts = {name: int(row[header.index(f"  {name}  ") + 2:].split()[0]) for name in ("stored", "matched")}
    assert counts["stored"] >= 5 and counts["matched"] >= 5, (header, row)
    assert "山城旧事: 3 of 3 chapters copied" in done.stdout
    assert f"{site}book/1/1.html" in done.stdout


def test_the_notice_lists_the_confirmed_copy_and_the_follow_up_rechecks_it(walked):
    done, folder, site = walked
    page = f"{site}book/1/1.html"
    assert f"{page} -> 山城旧事/第一章 雨夜来客: confirmed" in done.stdout
    assert (folder / "notice.zip").is_file()
    notice = done.stdout.split("NOTICE OF COPYRIGHT INFRINGEMENT", 1)[1]
    assert f"1. {page}" in notice and "《山城旧事》 第一章 雨夜来客" in notice
    assert f"{site}book/1/2.html" not in notice.split("Signed:")[0]  # only the confirmed copy
    assert f"{page} -> 山城旧事/第一章 雨夜来客: takedown-sent" in done.stdout
    assert "1 page re-checked: 1 still up" in done.stdout


def test_the_readme_shows_what_the_walkthrough_prints(walked):
    """The pasted output is the output of these commands: same commands, same step results."""
    done, _, site = walked
    text = README.read_text(encoding="utf-8")
    shown = section(text, "walkthrough-output")
    commands = [line for line in section(text, "walkthrough").splitlines() if line.strip()]
    assert [line[2:] for line in shown.splitlines() if line.startswith("$ ")] == commands
    ran = done.stdout.replace(site, f"http://127.0.0.1:{PORT}/")
    for key in ("3 chapters (3 new", "3 of 3 chapters copied", ": confirmed", "NOTICE OF COPYRIGHT INFRINGEMENT",
                ": takedown-sent", "1 still up"):
        assert key in shown and key in ran, key


def paste_output() -> None:
    """Run the walk-through and write its transcript into README.md under "What it prints"."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fpt-walkthrough-") as tmp:
        port = free_port()
        done = run_walkthrough(Path(tmp), port)
    if done.returncode != 0:
        raise SystemExit(f"the walk-through failed (exit {done.returncode}):\n{done.stdout}")
    shown = done.stdout.replace(f"127.0.0.1:{port}", f"127.0.0.1:{PORT}").replace(
        f"sample-site {port}", f"sample-site {PORT}")
    text = README.read_text(encoding="utf-8")
    new, n = re.subn(r"(<!-- walkthrough-output -->\n```\n).*?(```\n<!-- /walkthrough-output -->)",
                     lambda m: m.group(1) + shown + m.group(2), text, count=1, flags=re.S)
    assert n == 1, "README.md has no <!-- walkthrough-output --> block"
    README.write_text(new, encoding="utf-8")
    print(shown, end="")


if __name__ == "__main__":  # .venv/bin/python -m tests.test_readme_walkthrough: paste the real output
    paste_output()


def test_the_sample_site_refuses_a_port_in_use_in_one_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([str(ROOT / "scripts" / "sample-site"), str(port)], capture_output=True, text=True,
                              timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip() == f"port {port} on 127.0.0.1 is in use; choose another: scripts/sample-site {port + 1}"
