"""What `pip install .` gives a user: every package, every dependency, and the samples.

The last test builds the wheel and installs it alone into a fresh virtual
environment outside the checkout (the dependencies come from the project's
.venv through a path file, so nothing is downloaded), then runs the README's
offline examples and `fptrack demo --no-serve` from an empty folder.
"""
from __future__ import annotations

import importlib
import importlib.metadata as md
import os
import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from .conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
CODE_ROOTS = ("fingerprint", "pagetext", "ocr", "clikit", "simtool", "tracker", "crawler", "web", "fptrack")


def test_every_package_folder_is_listed_for_the_wheel():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for root in CODE_ROOTS for p in (ROOT / root).rglob("__init__.py")
             if "__pycache__" not in p.parts}
    assert found - listed == set(), "add these packages to [tool.setuptools] packages in pyproject.toml"
    assert PYPROJECT["tool"]["setuptools"]["package-dir"]["fptrack_samples"] == "samples"


def test_every_shipped_sample_file_is_in_the_package_data():
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["fptrack_samples"]
    shipped = {p for pat in patterns for p in (ROOT / "samples").glob(pat)}
    on_disk = {p for p in (ROOT / "samples").rglob("*") if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts}
    assert on_disk - shipped == set(), "add a pattern for these files to fptrack_samples' package-data"


def _unmet(req: Requirement, extras: frozenset[str] = frozenset(), seen: set | None = None) -> list[str]:
    """The requirements (with the extras they ask for, recursively) that the environment does not meet."""
    seen = set() if seen is None else seen
    if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in (extras or {""})):
        return []
    key = (req.name.lower(), frozenset(req.extras))
    if key in seen:
        return []
    seen.add(key)
    try:
        version = md.version(req.name)
    except md.PackageNotFoundError:
        return [f"{req} (not installed)"]
    if req.specifier and not req.specifier.contains(version, prereleases=True):
        return [f"{req} ({version} installed)"]
    missing = []
    for extra in req.extras:
        if extra not in (md.metadata(req.name).get_all("Provides-Extra") or []):
            missing.append(f"{req.name}[{extra}] ({req.name} {version} has no extra {extra!r})")
        for sub in md.requires(req.name) or []:
            sub_req = Requirement(sub)
            if sub_req.marker is not None and sub_req.marker.evaluate({"extra": extra}):
                missing += _unmet(sub_req, frozenset({extra}), seen)
    return missing


def test_every_declared_dependency_is_installed_with_its_extras():
    reqs = [Requirement(r) for r in PYPROJECT["project"]["dependencies"]]
    reqs += [Requirement(r) for name in ("test", "bench") for r in PYPROJECT["project"]["optional-dependencies"][name]]
    missing = [m for r in reqs for m in _unmet(r)]
    assert missing == [], f"not met: {missing}; run scripts/bootstrap test,bench"


@pytest.mark.parametrize("module", ["trafilatura", "lxml.html.clean", "pypinyin", "opencc", "xxhash",
                                   "scrapy", "scrapy_redis", "celery", "flask_wtf", "flask_login", "waitress",
                                   "pymongo", "redis", "charset_normalizer"])
def test_every_runtime_dependency_imports(module):
    importlib.import_module(module)


def test_the_html_reader_has_trafilatura():
    from pagetext import html

    assert html.trafilatura_available(), "trafilatura does not import: see the warning pagetext.html logged"


@pytest.mark.slow
def test_the_wheel_alone_runs_the_demo_and_the_readme_examples(tmp_path):
    wheels = tmp_path / "wheels"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(wheels), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    [wheel] = wheels.glob("fptrack-*.whl")

    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # The dependencies from this environment, without its editable finder for the checkout.
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q",
                              str(wheel)], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr[-2000:]

    work = tmp_path / "somewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FPT_", "PYTHON"))}
    env.update({"FPT_HOME": str(tmp_path / "home"), "PATH": f"{env_dir / 'bin'}:{env['PATH']}"})

    def run(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run(list(args), cwd=work, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{args}: {done.stdout[-1500:]}\n{done.stderr[-1500:]}"
        return done

    where = run(str(py), "-c", "import fingerprint, fptrack_samples; print(fingerprint.__file__); "
                               "print(fptrack_samples.ORIGINALS)").stdout.split()
    assert all(str(site) in w for w in where), f"imported from the checkout, not the wheel: {where}"
    run(str(env_dir / "bin" / "simtool"), "samples")
    assert len(list((work / "samples" / "originals").glob("*.txt"))) == 3
    track = run(str(env_dir / "bin" / "simtool"), "track", "samples/originals", "samples/pages", "--format", "table")
    found = [line.split()[:3] for line in track.stdout.splitlines()[1:]]
    assert ["biquge-1", "山城旧事-第一章", "duplicate"] in found and len(found) == 8, track.stdout
    assert not any(row[0] == "unrelated-news" for row in found)
    demo = run(str(env_dir / "bin" / "fptrack"), "demo", "--no-serve")
    assert "[1/5] registered 山城旧事 (3 chapters)" in demo.stdout, demo.stdout
    assert "5 copying 山城旧事" in demo.stdout, demo.stdout


def test_a_missing_trafilatura_is_reported_once_and_loudly(monkeypatch, caplog):
    from pagetext import html

    monkeypatch.setitem(sys.modules, "trafilatura", None)  # import trafilatura now raises ImportError
    monkeypatch.setattr(html, "_trafilatura", [])
    page = "<html><body><div id='content'>" + "陈守义坐在茶馆靠窗的位置。<br>" * 20 + "</div></body></html>"
    with caplog.at_level("WARNING", logger="pagetext.html"):
        first, meta = html.html_to_text(page)
        second, _ = html.html_to_text(page)
    warnings = [r for r in caplog.records if "trafilatura cannot be imported" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelname == "WARNING"
    assert "scripts/bootstrap" in warnings[0].getMessage()
    assert "陈守义坐在茶馆靠窗的位置" in first and first == second and meta["extractor"] == "lxml"


def test_a_missing_charset_normalizer_is_reported_once(monkeypatch, caplog):
    from pagetext import encoding_detectors

    monkeypatch.setitem(sys.modules, "charset_normalizer", None)
    monkeypatch.setattr(encoding_detectors, "_warned_missing", [])
    latin = "Café déjà vu, naïve façade — über straße. ".encode("cp1252") * 20
    with caplog.at_level("WARNING", logger="pagetext.encoding"):
        for _ in range(3):
            encoding_detectors.charset_normalizer_guess(latin)
    assert [r.levelname for r in caplog.records if "charset-normalizer cannot be imported" in r.getMessage()] == ["WARNING"]
