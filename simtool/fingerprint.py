"""`simtool fingerprint`: every channel's fingerprint of each document, one record each."""
from __future__ import annotations

import functools
import sys

import click

from clikit.cells import json_text
from clikit.common import friendly_errors, progress, quiet_option, write_records
from clikit.parallel import default_jobs, ordered_map
from fingerprint.engine import CHANNELS, EngineConfig, prepare
from fingerprint.errors import ParameterError
from simtool.inputs import load


def parse_channels(value: str) -> list[str]:
    names = [c.strip() for c in value.split(",") if c.strip()]
    if names == ["all"]:
        return list(CHANNELS)
    bad = [c for c in names if c not in CHANNELS]
    if bad or not names:
        raise ParameterError(f"unknown channel(s) {', '.join(bad) or '(none)'}; use any of "
                             f"{','.join(CHANNELS)} or all")
    return names


def hex_words(values, width: int) -> list[str]:
    """Zero-padded lower-case hex of each unsigned integer (width 8 or 16), as format(v, "0{width}x")."""
    import numpy as np

    s = np.asarray(values).astype(">u8" if width == 16 else ">u4").tobytes().hex()
    return [s[i : i + width] for i in range(0, len(s), width)]


def record(p, channels: list[str], config: EngineConfig) -> dict:
    # Runs of letters or digits too long to be words (a base64 blob, a minified script) are
    # left out of every channel; the count says how much of the text that was.
    rec = {"id": p.key, "units": p.units, "long_words": p.normalized.long_tokens}
    if "simhash" in channels:
        rec["simhash"] = p.simhash.to_dict()
    if "minhash" in channels:
        rec["minhash"] = {
            "values": hex_words(p.minhash.values, 8),
            "size": p.minhash.size,
            "num_perm": p.minhash.params.num_perm, "seed": p.minhash.params.seed,
            "method": p.minhash.params.method, "shingles": f"tokens:{config.minhash_ngram}gram",
        }
    if "pinyin" in channels:
        ip = p.initials.params
        rec["pinyin"] = {
            "codes": [format(c, "x") for c in p.initials.codes.tolist()],
            "offsets": p.sounds.start[p.initials.positions].tolist(),
            "granule": ip.granule, "levels": ip.levels, "seed": ip.seed,
        }
    if "winnow" in channels:
        wp = p.winnowed.params
        rec["winnow"] = {
            "hashes": hex_words(p.winnowed.hashes, 16),
            "offsets": p.unit_start[p.winnowed.positions].tolist(),
            "k": wp.k, "window": wp.window, "seed": wp.seed, "units": config.winnow_units,
        }
    if "translation" in channels:
        lang = p.language
        rec["translation"] = {
            "language": lang or "none",
            "keys": hex_words(p.translation_keys("post"), 16),
            "sentences": len(p.bags) if lang else 0,
        }
    return rec


def flat(rec: dict) -> dict:
    """One CSV row: lists joined by spaces, parameters as name=value."""
    out = {"id": rec["id"], "units": rec["units"], "long_words": rec["long_words"]}
    for ch in CHANNELS:
        if ch not in rec:
            continue
        v = rec[ch]
        if ch == "simhash":
            out["simhash"] = v["value"]
            out["simhash_params"] = f"bits={v['bits']} hash={v['hash']} features={v['features']}"
            continue
        if ch == "translation":
            out["translation"] = " ".join(v["keys"])
            out["translation_params"] = f"language={v['language']} sentences={v['sentences']}"
            continue
        main = {"minhash": "values", "pinyin": "codes", "winnow": "hashes"}[ch]
        out[ch] = " ".join(v[main])
        if "offsets" in v:
            out[f"{ch}_offsets"] = " ".join(map(str, v["offsets"]))
        out[f"{ch}_params"] = " ".join(f"{k}={x}" for k, x in v.items() if k not in (main, "offsets"))
    return out


def _fingerprint(doc, names: list[str], config: EngineConfig, fmt: str):
    """One document's output: its JSON line, or its CSV row (run in a worker process)."""
    rec = record(prepare(doc.key, doc.text, config), names, config)
    return json_text(rec) if fmt == "jsonl" else flat(rec)


@click.command("fingerprint")
@click.argument("inputs", nargs=-1, required=True)
@click.option("--channels", default="all", show_default=True,
              help=f"Comma-separated channels: {','.join(CHANNELS)}, or all.")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), default="jsonl", show_default=True)
@click.option("--jobs", type=click.IntRange(0), default=0,
              help="Processes that fingerprint the documents [0: one per core]; 1 works in this process. "
                   "The output is the same either way.")
@quiet_option
@friendly_errors
def command(inputs, channels, fmt, jobs, quiet):
    """Print the fingerprints of each document, with the parameters that made them.

    simhash: 64-bit value; minhash: 128 values (one permutation hashing);
    pinyin: pinyin-initial profile codes per window with their offsets;
    winnow: selected syllable 8-gram hashes with their offsets.
    Only the channels asked for are computed. long_words counts runs of
    letters or digits over 256 characters (a base64 blob, a minified
    script): no words, so left out of every channel.

    \b
    Example:
      simtool fingerprint chapters/ --channels simhash,minhash
      simtool fingerprint book.txt --format csv > book.csv
    """
    names = parse_channels(channels)
    config = EngineConfig()
    docs = load(list(inputs), what="documents", quiet=quiet)
    work = functools.partial(_fingerprint, names=names, config=config, fmt=fmt)
    results = progress(ordered_map(work, docs, jobs or default_jobs()), quiet=quiet, desc="fingerprinting",
                       total=len(docs))
    if fmt == "csv":
        cols = ["id", "units", "long_words"]
        for ch in names:
            cols += [ch] + ([f"{ch}_offsets"] if ch in ("pinyin", "winnow") else []) + [f"{ch}_params"]
        write_records(results, "csv", cols)
    else:
        out = sys.stdout
        for line in results:
            out.write(line + "\n")
