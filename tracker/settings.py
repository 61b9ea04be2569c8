"""Settings from environment variables (FPT_...) and an optional TOML file, with
defaults that need nothing set: the embedded store under FPT_HOME, the
in-process index, and no broker (work runs in-process)."""
from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from fingerprint.engine import EngineConfig
from fingerprint.index import IndexParams


class SettingsError(ValueError):
    """A setting has a value that cannot be used; the message names it and the fix."""


def default_home() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "fptrack"


@dataclass(frozen=True)
class Settings:
    home: Path = field(default_factory=default_home)  # FPT_HOME: the embedded store's folder
    mongo_url: str = ""  # FPT_MONGO_URL: use MongoDB instead of the embedded store
    mongo_db: str = "fptrack"  # FPT_MONGO_DB
    redis_url: str = ""  # FPT_REDIS_URL: keep the indexes in Redis instead of in-process
    redis_prefix: str = "fpt:"  # FPT_REDIS_PREFIX
    broker_url: str = ""  # FPT_BROKER_URL: queue work for Celery workers instead of running it in-process
    min_containment: float = EngineConfig.min_containment  # FPT_MIN_CONTAINMENT
    min_page_share: float = EngineConfig.min_page_share  # FPT_MIN_PAGE_SHARE
    min_long_run: int = EngineConfig.min_long_run  # FPT_MIN_LONG_RUN
    winnow_sample: int = 32  # FPT_WINNOW_SAMPLE: 1 in N winnowed hashes is indexed
    pinyin_sample: int = 8  # FPT_PINYIN_SAMPLE
    max_attempts: int = 5  # FPT_MAX_ATTEMPTS: a failing page is retried this many times
    # FPT_RECRAWL_HOUR: the daily run's UTC hour, and that of the sites' scheduled crawls unless a site sets its own
    recrawl_hour: int = 3
    # FPT_EXTRACT_PROCESSES: processes that extract crawled pages beside the crawl
    # (-1: one fewer than the cores, at most 4; 0: extract in the crawl's own process)
    extract_processes: int = -1
    # FPT_CHANNELS: the channels indexed and scored, comma-separated (simhash, minhash, pinyin, winnow,
    # translation).
    # A subset saves the others' preparation on every original and page; a page is still verified on
    # its copied passages (the syllable alignment), whatever the subset. After a change, run
    # `fptrack reindex --refingerprint`.
    channels: str = "simhash,minhash,pinyin,winnow,translation"
    # FPT_EVIDENCE_MAX_BYTES: the largest response body kept as evidence (WARC record) per page;
    # a larger body is kept cut at this size and marked truncated.
    evidence_max_bytes: int = 5_000_000
    # FPT_EVIDENCE_DAYS: days the evidence of a page (WARC, screenshot) is kept after the page is
    # removed from the store or its copy is marked removed (0: kept as long as the page is).
    evidence_days: int = 365
    # FPT_SMTP_URL: where notification e-mails go (smtp://[USER:PASSWORD@]HOST:PORT, smtps:// for
    # TLS from the start, smtp+starttls:// for STARTTLS); unset: no e-mail is sent.
    smtp_url: str = ""
    mail_from: str = "fptrack@localhost"  # FPT_MAIL_FROM: the sender of notification e-mails
    recheck_hour: int = 5  # FPT_RECHECK_HOUR: daily re-check of pages whose takedown was sent (UTC hour)
    # FPT_EVENTS_DAYS: days notification events are kept once their deliveries are done (sent); the
    # daily run removes older ones with their deliveries (0: kept for ever). An event with a delivery
    # still pending is kept whatever its age.
    events_days: int = 180
    # FPT_FETCH_ALLOW: networks (10.0.0.0/8) and host names, comma-separated, that the system may
    # fetch though they are not public (an intranet site, a test server); see tracker.egress.
    fetch_allow: str = ""
    # FPT_SEEN_TEXTS: 1: a page whose text was judged before, against the same registered chapters,
    # gets that judgement's matches by lookup (tracker.seen); 0: every page is judged in full.
    seen_texts: int = 1

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Defaults, then the TOML file named by FPT_CONFIG (if any), then FPT_* variables."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        path = env.get("FPT_CONFIG")
        if path:
            try:
                with open(path, "rb") as f:
                    data = tomllib.load(f)
            except OSError as e:
                raise SettingsError(f"cannot read FPT_CONFIG={path}: {e.strerror}; fix the path or unset FPT_CONFIG") from e
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:  # tomllib reads the bytes as strict UTF-8
                raise SettingsError(f"FPT_CONFIG={path} is not valid TOML: {e}") from e
            # Settings sit in an [fptrack] table or at the top level; other tables ([discovery]) are
            # read by the parts they belong to.
            values.update({k: v for k, v in data.get("fptrack", data).items() if not isinstance(v, dict)})
        for f in fields(cls):
            name = f"FPT_{f.name.upper()}"
            if name in env:
                values[f.name] = env[name]
        return cls()._with(values)

    def _with(self, values: Mapping[str, object]) -> Settings:
        known = {f.name: f for f in fields(self)}
        out = {}
        for name, raw in values.items():
            if name not in known:
                raise SettingsError(f"unknown setting {name!r}; known: {', '.join(sorted(known))}")
            kind = type(getattr(self, name))
            try:
                out[name] = Path(os.path.expanduser(str(raw))) if kind is Path else kind(raw)
            except (TypeError, ValueError):
                raise SettingsError(
                    f"setting {name} (FPT_{name.upper()}) must be a {kind.__name__}, got {raw!r}"
                ) from None
        s = replace(self, **out)
        s.engine_config()  # validates the thresholds
        if s.winnow_sample < 1 or s.pinyin_sample < 1:
            raise SettingsError("FPT_WINNOW_SAMPLE and FPT_PINYIN_SAMPLE must be at least 1")
        if s.evidence_max_bytes < 1024:
            raise SettingsError("FPT_EVIDENCE_MAX_BYTES must be at least 1024 (bytes of a page kept as evidence)")
        if s.evidence_days < 0:
            raise SettingsError("FPT_EVIDENCE_DAYS must be 0 (keep as long as the page) or more days")
        if s.events_days < 0:
            raise SettingsError("FPT_EVENTS_DAYS must be 0 (keep notification events for ever) or more days")
        if not 0 <= s.recheck_hour <= 23 or not 0 <= s.recrawl_hour <= 23:
            raise SettingsError("FPT_RECRAWL_HOUR and FPT_RECHECK_HOUR are UTC hours, 0 to 23")
        if s.smtp_url and s.smtp_url.split("://", 1)[0] not in ("smtp", "smtps", "smtp+starttls"):
            raise SettingsError("FPT_SMTP_URL must be smtp://HOST:PORT, smtps://HOST:PORT or "
                                "smtp+starttls://HOST:PORT (with USER:PASSWORD@ before the host if needed)")
        if s.fetch_allow:
            from .egress.policy import parse_allow

            try:
                parse_allow(s.fetch_allow)
            except ValueError as e:
                raise SettingsError(str(e)) from None
        if s.seen_texts not in (0, 1):
            raise SettingsError("FPT_SEEN_TEXTS must be 1 (reuse the judgement of a text seen before) or 0")
        if s.extract_processes < -1:
            raise SettingsError("FPT_EXTRACT_PROCESSES must be -1 (one fewer than the cores), 0 or more")
        return s

    def to_env(self) -> dict[str, str]:
        """These settings as FPT_* variables, for a child process (Settings.load reads them back)."""
        return {f"FPT_{f.name.upper()}": str(getattr(self, f.name)) for f in fields(self)}

    def engine_config(self) -> EngineConfig:
        try:
            return EngineConfig(min_containment=self.min_containment, min_page_share=self.min_page_share,
                                min_long_run=self.min_long_run,
                                channels=tuple(c.strip() for c in self.channels.split(",") if c.strip()))
        except ValueError as e:
            raise SettingsError(f"bad engine setting: {e} (FPT_MIN_* thresholds, FPT_CHANNELS)") from e

    def index_params(self) -> IndexParams:
        """Sampling applies to the Redis index; the in-process index keeps every key.
        A sampled index proposes a candidate on one shared key (verification decides):
        on the quality benchmark that keeps recall and precision at 1.000."""
        if self.redis_url:
            return IndexParams(winnow_sample=self.winnow_sample, pinyin_sample=self.pinyin_sample, min_hits=1)
        return IndexParams()
