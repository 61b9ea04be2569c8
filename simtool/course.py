"""`simtool course N M` (also `simtool N M`): the BUAA course's Simhash similarity check."""
from __future__ import annotations

import time
from pathlib import Path

import click

from clikit.common import friendly_errors, note, quiet_option
from clikit.plural import counted
from simtool import buaa


@click.command(
    name="course",
    context_settings={"help_option_names": ["-h", "--help"], "ignore_unknown_options": True},
)
@click.argument("n", metavar="N")
@click.argument("m", metavar="M")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default="the current folder",
    help="Folder holding stopwords.txt, hashvalue.txt, article.txt and sample.txt.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the report.  [default: result.txt in the --dir folder]",
)
@quiet_option
@friendly_errors
def command(n: str, m: str, directory: Path, output: Path | None, quiet: bool) -> None:
    """Find pages of article.txt similar to each page of sample.txt (the BUAA course mode).

    N is the feature vector length (1-10000): the N most frequent non-stopwords
    of article.txt, ties in dictionary order. M is the fingerprint length in bits
    (1-128): the first M columns of the first N rows of hashvalue.txt. For every
    sample page, result.txt lists the article pages whose fingerprints differ in
    0, 1, 2 or 3 bits, as lines `d:ID ID ... `; the first sample's block is also
    printed.

    \b
    Example:
      cd project2023 && simtool 1000 16      # writes ./result.txt
      simtool 1000 32 --dir project2023 -o /tmp/result32.txt
    """
    n_value = buaa.parse_course_int(n, "N", buaa.MAX_N, "feature vector length")
    m_value = buaa.parse_course_int(m, "M", buaa.MAX_M, "fingerprint length in bits")
    started = time.perf_counter()
    result = buaa.run_course(directory, n_value, m_value)
    path = buaa.write_result(output if output is not None else directory / buaa.RESULT_FILE, result)
    click.echo(result.first_block, nl=False)
    fps = result.fingerprints
    note(
        f"wrote {path}: {counted(len(fps.sample_ids), 'sample')} checked against {counted(len(fps.article_ids), 'page')} "
        f"(N={n_value}, M={m_value}) in {time.perf_counter() - started:.2f} s",
        quiet=quiet,
    )
