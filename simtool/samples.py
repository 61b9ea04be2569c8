"""`simtool samples`: copy the shipped sample novel and pirated pages into a folder."""
from __future__ import annotations

import shutil
from pathlib import Path

import click

from clikit.common import note, quiet_option


@click.command("samples")
@click.argument("folder", default="samples", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite sample files that differ from the shipped ones.")
@quiet_option
def command(folder: Path, force: bool, quiet: bool) -> None:
    """Copy the sample novel (originals/), its pirated pages (pages/) and example
    site rules (sites.toml), which ship with fptrack, into FOLDER (default:
    ./samples), so that the README's examples run outside a checkout.

    Files already there with the same content are left alone; a file that
    differs is kept unless --force is given.

    \b
    Example:
      $ simtool samples
      $ simtool track samples/originals samples/pages --format table
    """
    import fptrack_samples as shipped

    sources = [(f, Path("originals") / f.name) for f in sorted(shipped.ORIGINALS.iterdir()) if f.is_file()]
    sources += [(f, Path("pages") / f.name) for f in sorted(shipped.PAGES.iterdir()) if f.is_file()]
    sources.append((shipped.SITES, Path("sites.toml")))
    if folder.resolve() == shipped.HERE:
        note(f"{folder} is where the samples ship from: nothing to copy", quiet=quiet)
        return
    written = same = kept = 0
    for src, rel in sources:
        dest = folder / rel
        if dest.is_file() and dest.read_bytes() == src.read_bytes():
            same += 1
            continue
        if dest.exists() and not force:
            kept += 1
            note(f"kept {dest}: it differs from the shipped sample (--force overwrites it)", quiet=quiet)
            continue
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
        except OSError as e:
            raise click.ClickException(f"cannot write {dest}: {e.strerror or e}; choose a folder you can write to") from e
        written += 1
    note(f"{folder}: {written} sample files written, {same} already there, {kept} kept "
         f"(originals/: 3 chapters of {shipped.WORK}; pages/: their pirated forms)", quiet=quiet)
