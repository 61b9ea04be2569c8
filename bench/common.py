"""Helpers shared by the benchmark scripts: corpus location, timing, tables, machine info.

Nothing here depends on the benchmark-only extras (rensa, datasketch, simhash); a script
that needs one of them imports it itself and reports a missing one as a `BenchError`.
"""
from __future__ import annotations

import datetime as _dt
import gc
import importlib
import importlib.metadata
import os
import platform
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "bench" / "out"
NOVELS_DIR = "zh_novels"


class BenchError(Exception):
    """A problem the user can fix (missing corpus, missing module, bad option).

    `run_cli` prints it as one message, without a traceback, and exits with status 2.
    """


# ----------------------------------------------------------------------------- corpus


def corpus_candidates(arg: str | os.PathLike | None = None) -> list[Path]:
    """Where the corpus is looked for, in order: --corpus, $FPT_SHARED/corpus, ../shared/corpus."""
    if arg:
        return [Path(arg)]
    if os.environ.get("FPT_SHARED"):
        return [Path(os.environ["FPT_SHARED"]) / "corpus"]
    return [ROOT.parent / "shared" / "corpus"]


def corpus_path(arg: str | os.PathLike | None = None, *, need: str = NOVELS_DIR) -> Path:
    """The corpus folder (it must hold `need`), or a BenchError saying where it looked."""
    tried = corpus_candidates(arg)
    for p in tried:
        if (p / need).is_dir():
            return p
    where = ", ".join(str(p) for p in tried)
    raise BenchError(
        f"the shared corpus was not found: looked for {need}/ in {where}. "
        "Check out ../shared next to the project, set FPT_SHARED=/path/to/shared "
        "(the folder that contains corpus/), or pass --corpus /path/to/corpus."
    )


@dataclass(frozen=True)
class ChapterText:
    """One chapter of a corpus novel."""

    key: str  # "<novel>/<index>", index counted from 0 in reading order
    novel: str
    index: int
    text: str

    @property
    def nbytes(self) -> int:
        return len(self.text.encode("utf-8"))


def load_chapters(corpus: Path, *, folder: str = NOVELS_DIR, novels: Sequence[str] | None = None) -> list[ChapterText]:
    """Every chapter of the novels in corpus/folder, cut with fingerprint.chapters.split_chapters.

    Files are read in name order; `novels` (file stems) restricts and orders them.
    """
    from fingerprint.chapters import split_chapters

    d = corpus / folder
    files = sorted(d.glob("*.txt"))
    if novels is not None:
        by_stem = {f.stem: f for f in files}
        missing = [n for n in novels if n not in by_stem]
        if missing:
            raise BenchError(f"no {', '.join(m + '.txt' for m in missing)} in {d}; available: {', '.join(sorted(by_stem))}")
        files = [by_stem[n] for n in novels]
    if not files:
        raise BenchError(f"no .txt files in {d}; the benchmark needs the zh_novels corpus there")
    out: list[ChapterText] = []
    for f in files:
        try:
            text = f.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise BenchError(f"cannot read {f} as UTF-8 text: {e}") from None
        for i, ch in enumerate(split_chapters(text)):
            out.append(ChapterText(f"{f.stem}/{i:03d}", f.stem, i, ch.text))
    return out


# ----------------------------------------------------------------------------- timing


@dataclass
class Timing:
    """Best wall time of several runs of the same work, and the result of the last run."""

    best: float
    runs: int
    times: list[float] = field(default_factory=list)
    result: Any = None


def best_of(fn: Callable[[], Any], repeat: int = 3, *, budget: float | None = None) -> Timing:
    """Run `fn` up to `repeat` times and keep the fastest wall time.

    With `budget` (seconds), no further run starts once the runs so far have taken that
    long, so a slow item gets fewer repeats instead of blowing up the total run time.
    Garbage collection is done before each run and disabled during it.
    """
    if repeat < 1:
        raise BenchError(f"repeat must be at least 1, got {repeat}")
    times: list[float] = []
    result = None
    for _ in range(repeat):
        gc.collect()
        was = gc.isenabled()
        gc.disable()
        try:
            t0 = time.perf_counter()
            result = fn()
            times.append(time.perf_counter() - t0)
        finally:
            if was:
                gc.enable()
        if budget is not None and sum(times) >= budget:
            break
    return Timing(best=min(times), runs=len(times), times=times, result=result)


def best_of_interleaved(fns: dict[str, Callable[[], Any]], repeat: int = 3, *,
                        budget: float | None = None) -> dict[str, Timing]:
    """`best_of` for several functions whose times are compared: their runs alternate
    (a, b, c, a, b, c, ...), so a change in machine load affects them alike.

    `budget` applies to each function on its own: one whose runs have taken that long
    gets no more runs, the others go on.
    """
    if repeat < 1:
        raise BenchError(f"repeat must be at least 1, got {repeat}")
    out = {name: Timing(best=float("inf"), runs=0) for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            o = out[name]
            if budget is not None and sum(o.times) >= budget:
                continue
            t = best_of(fn, 1)
            o.times.append(t.best)
            o.best, o.runs = min(o.best, t.best), o.runs + 1
    return out


def percentile(values: Sequence[float] | np.ndarray, q: float) -> float:
    """The q-th percentile (0..100) of `values`, nan for none."""
    a = np.asarray(values, dtype=np.float64)
    return float(np.percentile(a, q)) if a.size else float("nan")


# ----------------------------------------------------------------------------- formatting


def fmt_seconds(s: float | None) -> str:
    if s is None or s != s:
        return "–"
    if s >= 100:
        return f"{s:.0f} s"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms" if s >= 0.01 else f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} µs"


def fmt_rate(x: float | None, digits: int = 0) -> str:
    if x is None or x != x:
        return "–"
    return f"{x:,.{digits}f}"


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"  # pragma: no cover


@dataclass
class Table:
    """A titled markdown table with notes printed under it."""

    title: str
    headers: list[str]
    rows: list[list[Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *cells: Any) -> None:
        if len(cells) != len(self.headers):
            raise ValueError(f"row has {len(cells)} cells, table {self.title!r} has {len(self.headers)} columns")
        self.rows.append(list(cells))

    def column(self, name: str) -> list[Any]:
        i = self.headers.index(name)
        return [r[i] for r in self.rows]

    def markdown(self) -> str:
        return f"### {self.title}\n\n" + markdown_table(self.headers, self.rows) + "".join(
            f"\n{n}" if i else f"\n\n{n}" for i, n in enumerate(self.notes)
        )


def _cell(v: Any) -> str:
    s = str(v) if v is not None else "–"
    return s.replace("|", "\\|").replace("\n", " ")


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-style markdown table; numbers are right-aligned."""
    rows = [list(r) for r in rows]
    numeric = [
        bool(rows) and all(isinstance(r[i], (int, float)) or _looks_numeric(r[i]) for r in rows)
        for i in range(len(headers))
    ]
    lines = ["| " + " | ".join(_cell(h) for h in headers) + " |"]
    lines.append("| " + " | ".join("---:" if n else "---" for n in numeric) + " |")
    for r in rows:
        lines.append("| " + " | ".join(_cell(v) for v in r) + " |")
    return "\n".join(lines)


def _looks_numeric(v: Any) -> bool:
    if not isinstance(v, str) or not v:
        return False
    head = v.strip().lstrip("~≈<>×x").split(" ")[0].replace(",", "")
    try:
        float(head.rstrip("%×x"))
        return True
    except ValueError:
        return v.strip() == "–"


# ----------------------------------------------------------------------------- machine


def version_of(dist: str) -> str:
    """The installed version of a distribution, or 'not installed'."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def has_module(name: str) -> bool:
    try:
        importlib.import_module(name)
        return True
    except ImportError:
        return False


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gb() -> tuple[float | None, float | None]:
    """(total, available) memory in GB from /proc/meminfo, or (None, None)."""
    info: dict[str, int] = {}
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                name, rest = line.split(":", 1)
                info[name] = int(rest.split()[0]) * 1024
    except (OSError, ValueError):
        return None, None
    total, avail = info.get("MemTotal"), info.get("MemAvailable")
    return (total / 2**30 if total else None, avail / 2**30 if avail else None)


def available_bytes() -> int | None:
    _, avail = memory_gb()
    return int(avail * 2**30) if avail is not None else None


def load_average() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def machine_info(libraries: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(name, value) pairs describing the machine and the library versions."""
    total, avail = memory_gb()
    mem = f"{total:.1f} GB total, {avail:.1f} GB available" if total and avail else "unknown"
    libs = ["fptrack", "numpy", "xxhash", *libraries]
    return [
        ("date", _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")),
        ("platform", platform.platform()),
        ("cpu", f"{cpu_model()}, {os.cpu_count()} logical CPUs"),
        ("memory", mem),
        ("load average (1/5/15 min) at start", load_average()),
        ("python", f"{platform.python_implementation()} {platform.python_version()}"),
        ("libraries", ", ".join(f"{d} {version_of(d)}" for d in libs)),
    ]


def header_markdown(title: str, libraries: Sequence[str] = (), extra: Sequence[tuple[str, str]] = ()) -> str:
    lines = [f"# {title}", ""]
    for k, v in [*machine_info(libraries), *extra]:
        lines.append(f"- **{k}**: {v}")
    return "\n".join(lines)


def write_report(stem: str, text: str, out_dir: Path | None = None) -> Path:
    """Write `text` to bench/out/<stem>-<YYYY-MM-DD>.md and return the path."""
    d = out_dir or OUT_DIR
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{stem}-{_dt.date.today().isoformat()}.md"
    path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    return path


def run_cli(main: Callable[[], int | None]) -> None:
    """Run a benchmark's main(); user errors become one message on stderr and exit status 2."""
    try:
        code = main()
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    sys.exit(code or 0)
