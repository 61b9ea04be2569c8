"""`simtool dedup`: group near-duplicate texts with Simhash and Single-Pass clustering."""
from __future__ import annotations

import time
from collections import Counter

import click

from clikit.common import friendly_errors, note, progress, quiet_option, write_records
from clikit.plural import counted
from fingerprint.cluster import SinglePass
from fingerprint.normalize import normalize
from fingerprint.simhash import Simhash, simhash, text_simhash

DOC_COLUMNS = ("key", "cluster", "centre", "distance")
CLUSTER_COLUMNS = ("cluster", "centre", "size", "members")


@click.command("dedup")
@click.argument("inputs", nargs=-1, required=True)
@click.option("--threshold", type=click.IntRange(0, 15), default=3, show_default=True,
              help="Join a cluster when the Hamming distance to its centre is at most this many bits.")
@click.option("--bits", type=click.IntRange(16, 64), default=64, show_default=True, help="Simhash width.")
@click.option("--ngram", type=click.IntRange(1, 8), default=2, show_default=True,
              help="Token n-grams hashed into the Simhash (tokens are CJK characters and whole words).")
@click.option("--hash", "hashname", type=click.Choice(["fast", "sdbm"]), default="fast", show_default=True,
              help="Feature hash: fast (vectorised 64-bit mixing of token n-grams) or sdbm "
                   "(the SDBM string hash of each n-gram, as in Li, Mao and Chen 2013).")
@click.option("--format", "fmt", type=click.Choice(["table", "jsonl", "csv"]), default="table", show_default=True)
@click.option("--clusters", "per_cluster", is_flag=True,
              help="One record per cluster (with its members) instead of per document.")
@click.option("--duplicates-only", is_flag=True, help="Leave out documents (or clusters) that have no near-duplicate.")
@click.option("-v", "--verbose", is_flag=True,
              help="List every skipped input with its reason, and every input with bad characters replaced, "
                   "on standard error.")
@quiet_option
@friendly_errors
def command(inputs, threshold, bits, ngram, hashname, fmt, per_cluster, duplicates_only, verbose, quiet):
    """Group near-duplicate texts: each document joins the first cluster whose
    centre is within --threshold bits of its Simhash, or starts a new one.

    INPUT is a .txt, .html or .jsonl file, a folder of them, or - for standard
    input. Documents are clustered in the order they are read, so the first
    copy of a text becomes its cluster's centre. The summary (documents,
    clusters, skipped inputs and why) goes to standard error.

    \b
    Example:
      $ simtool dedup pages/ --threshold 3
      key        cluster  centre     distance
      chapter01  0        chapter01  0
      repost-a   0        chapter01  2
      chapter02  1        chapter02  0
      $ simtool dedup pages/ --clusters --format jsonl --duplicates-only
    """
    from pagetext.sources import ReadReport, read_documents

    report = ReadReport()
    sp = SinglePass(threshold=threshold, bits=bits)
    rows: list[dict] = []
    empty: list[str] = []
    t0 = time.perf_counter()
    for doc in progress(read_documents(inputs, report), quiet=quiet, desc="dedup"):
        nt = normalize(doc.text)
        if len(nt) == 0:
            empty.append(doc.source or doc.key)
            continue
        fp = text_simhash(nt, bits=bits, ngram=ngram) if hashname == "fast" else _sdbm_simhash(nt, bits, ngram)
        cid = sp.add(doc.key, fp)
        c = sp[cid]
        rows.append({"key": doc.key, "cluster": cid, "centre": c.centre, "distance": c.members[-1].distance,
                     "simhash": fp.hex(), "source": doc.source})
    elapsed = time.perf_counter() - t0

    clusters = sp.clusters
    if per_cluster:
        records = [
            {"cluster": c.id, "centre": c.centre, "size": len(c), "members": c.keys,
             "distances": [m.distance for m in c.members]}
            for c in clusters
            if not duplicates_only or len(c) > 1
        ]
        write_records(records, fmt, CLUSTER_COLUMNS)
    else:
        records = [r for r in rows if not duplicates_only or len(sp[r["cluster"]]) > 1]
        write_records(records, fmt, DOC_COLUMNS)

    for src in empty:
        report.add_skip(src, "no text left after normalisation")
    dup = sum(1 for c in clusters if len(c) > 1)
    note(f"dedup: {report.summary()}", quiet=quiet)
    note(
        f"dedup: {counted(len(rows), 'document')} in {counted(len(clusters), 'cluster')} ({dup} with near-duplicates), "
        f"threshold {threshold} of {bits} bits, {elapsed:.2f} s",
        quiet=quiet,
    )
    if verbose:
        for line in report.details():
            note(f"  {line}", quiet=quiet)


def _sdbm_simhash(nt, bits: int, ngram: int) -> Simhash:
    """Simhash of the token n-gram strings, each hashed with SDBM and weighted by its count."""
    toks = nt.token_strings()
    n = min(ngram, len(toks))
    counts = Counter("".join(toks[i : i + n]) for i in range(len(toks) - n + 1))
    return simhash(list(counts), list(counts.values()), bits=bits, hashfunc="sdbm", label=f"tokens:{n}gram,tf")
