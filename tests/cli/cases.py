"""What each command a person runs is run with under the terminal tests, and what it must say.

Arguments are formatted with: {samples} (the sample files), {site} (the sample pirate site on
127.0.0.1), {tmp} (the test's own folder), {port} (a free port), {data} (a BUAA course folder),
{token} (a token's id), {smtp} (an SMTP server on 127.0.0.1), {search}
(a search engine on 127.0.0.1), {work}. Every command of `fptrack` and `simtool` has a case here or
is a server in SERVERS; tests/cli/test_terminal.py fails for a command that has neither.
"""
from __future__ import annotations

from dataclasses import dataclass

WORK = "山城旧事"
FIRST = f"{WORK}/{WORK}-第一章"


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    says: str  # a regular expression the output must hold (piped: on the stream `on`)
    code: int = 0
    progress: str = ""  # a progress bar's description: on a terminal it shows, piped it never does
    answers: tuple[tuple[str, str], ...] = ()  # (prompt, line) typed at prompts on a terminal
    piped_args: tuple[str, ...] | None = None  # the arguments when piped (no prompts there), if others
    stdin: str = ""  # standard input when piped
    before: tuple[tuple[str, ...], ...] = ()  # commands run first (piped) in the test's home
    on: str = "out"  # where a piped run must say it: "out", or "err" for a summary on standard error
    env: tuple[tuple[str, str], ...] = ()  # more environment variables (formatted like the arguments)


@dataclass(frozen=True)
class Server:
    args: tuple[str, ...]
    ready: str  # a regular expression it prints once it serves
    needs: str = ""  # "redis": the broker


CASES: dict[str, Case] = {
    "fptrack add-work": Case(("fptrack", "add-work", "新书", "{samples}/originals"), r"新书: 3 chapters \(3 new",
                             progress="registering chapters"),
    "fptrack ingest": Case(("fptrack", "ingest", "{samples}/originals", "--site", "mirror"),
                           r"3 pages queued, 0 unchanged\n(.*\r)*3 pages done, 0 failed, 3 matches",
                           progress="processing pages"),
    "fptrack process": Case(("fptrack", "process"), r"3 pages done, 0 failed, 3 matches",
                            progress="processing pages",
                            before=(("fptrack", "ingest", "{samples}/originals", "--site", "mirror", "--no-process"),)),
    "fptrack reindex": Case(("fptrack", "reindex", "--refingerprint"), r"indexed 3 chapters",
                            progress="fingerprinting"),
    "fptrack works": Case(("fptrack", "works"), rf"work +author.*\n{WORK} +林岚 +3 "),
    "fptrack report": Case(("fptrack", "report", WORK), rf"chapter .*copies.*\n{WORK}-第一章 "),
    "fptrack matches": Case(("fptrack", "matches", "--work", WORK), r"page +original.*\nbiquge-1 +"),
    "fptrack set-status": Case(("fptrack", "set-status", "tw-3", f"{WORK}/{WORK}-第三章", "confirmed"),
                               rf"tw-3 -> {WORK}/{WORK}-第三章: confirmed"),
    "fptrack stats": Case(("fptrack", "stats"), r"works 1, chapters 3\npages +queued 0, done \d+"),
    "fptrack crawl": Case(("fptrack", "crawl", "--site", "sample", "--fresh", "--delay", "0", "--timeout", "2",
                           "--retries", "0", "--depth", "4"), r"site +fetched.*\nsample +\d+", progress="crawling"),
    "fptrack recheck": Case(("fptrack", "recheck", "--delay", "0", "--timeout", "5"), r"page +url +outcome",
                            progress="re-checking pages"),
    "fptrack discover": Case(("fptrack", "discover", "--work", WORK, "--max-queries", "3"),
                             rf"query +returned +new.*\n0 +{WORK} +\w+ .* [1-9]\d* +0 ",
                             env=(("FPT_SEARCH_URL", "{search}"), ("FPT_SEARCH_INTERVAL", "0"))),
    "fptrack evidence": Case(("fptrack", "evidence", "--work", WORK, "--site", "biquge", "-o", "{tmp}/biquge.zip",
                              "--no-pdf"), r"biquge\.zip: 1 match on 1 page, \d+ files; manifest SHA-256 [0-9a-f]{{64}}",
                             before=(("fptrack", "set-status", "tw-3", f"{WORK}/{WORK}-第三章", "confirmed"),)),
    "fptrack notify add": Case(("fptrack", "notify", "add", "--email", "b@example.com", "--site", "biquge"),
                               r"\w+: email b@example\.com for site biquge"),
    "fptrack notify list": Case(("fptrack", "notify", "list"), r"id +channel.*\n\w+ +email +rights@example\.com"),
    "fptrack notify log": Case(("fptrack", "notify", "log"), r"event +subscription +status"),
    "fptrack notify purge": Case(("fptrack", "notify", "purge", "--days", "30", "--dry-run"),
                                 r"would remove \d+ events? and \d+ deliver"),
    "fptrack notify remove": Case(("fptrack", "notify", "remove", "rights@example.com"),
                                  r"removed \w+: email rights@example\.com"),
    "fptrack notify send": Case(("fptrack", "notify", "send"), r"1 digest and 0 webhook events sent \(\d+ deliveries\); 0 waiting",
                                env=(("FPT_SMTP_URL", "{smtp}"),)),
    "fptrack org add": Case(("fptrack", "org", "add", "press"), r"organisation press"),
    "fptrack org assign": Case(("fptrack", "org", "assign", "other", "--site", "sample"), r"moved to other: 1 site"),
    "fptrack org list": Case(("fptrack", "org", "list"), r"default\nother\n"),
    "fptrack sites add": Case(("fptrack", "sites", "add", "mirror", "{site}/big5/book/1/"),
                              r"site mirror: 1 start URL, rules: none \(automatic\); schedule: daily at"),
    "fptrack sites import": Case(("fptrack", "sites", "import", "{samples}/sites.toml"),
                                 r"site biquge-example: 1 start URL\nsite wap-example: 1 start URL\n"),
    "fptrack sites list": Case(("fptrack", "sites", "list"), r"site +start_urls.*\nsample +{site}/book/1/ +yes "),
    "fptrack sites remove": Case(("fptrack", "sites", "remove", "sample"), r"removed site sample"),
    "fptrack sites show": Case(("fptrack", "sites", "show", "sample"), r"site sample \(schedule: .*\n  start: {site}/book/1/"),
    "fptrack token create": Case(("fptrack", "token", "create", "--scope", "write", "--name", "bot"),
                                 r"token \w+ \(write\).*\n\S+"),
    "fptrack token list": Case(("fptrack", "token", "list"), r"{token} +default +read +ci"),
    "fptrack token revoke": Case(("fptrack", "token", "revoke", "{token}"), r"revoked {token}"),
    "fptrack user add": Case(("fptrack", "user", "add", "alice", "--role", "admin"), r"added alice \(admin\)",
                             answers=(("Password", "s3cret-words-1"), ("Repeat", "s3cret-words-1")),
                             piped_args=("fptrack", "user", "add", "alice", "--role", "admin", "--password-stdin"),
                             stdin="s3cret-words-1\n"),
    "fptrack user list": Case(("fptrack", "user", "list"), r"gone +viewer +default"),
    "fptrack user passwd": Case(("fptrack", "user", "passwd", "gone"), r"password changed for gone",
                                answers=(("Password", "new-words-22"), ("Repeat", "new-words-22")),
                                piped_args=("fptrack", "user", "passwd", "gone", "--password-stdin"),
                                stdin="new-words-22\n"),
    "fptrack user remove": Case(("fptrack", "user", "remove", "gone"), r"removed gone"),
    "simtool course": Case(("simtool", "1", "4", "--dir", "{data}"), r"Sample-1"),
    "simtool fingerprint": Case(("simtool", "fingerprint", "{samples}/originals", "--format", "csv"),
                                rf"{WORK}-第一章", progress="fingerprinting"),
    "simtool compare": Case(("simtool", "compare", "{samples}/originals/山城旧事-第三章.txt",
                             "{samples}/pages/tw-3.txt"), r"duplicate"),
    "simtool dedup": Case(("simtool", "dedup", "{samples}/pages", "--format", "table"), r"biquge-1",
                          progress="dedup"),
    "simtool track": Case(("simtool", "track", "{samples}/originals", "{samples}/pages", "--format", "table"),
                          rf"biquge-1 +{WORK}-第一章 +duplicate", progress="matching pages"),
    "simtool samples": Case(("simtool", "samples", "{tmp}/copy"),
                            r"copy: 12 sample files written, 0 already there, 0 kept \(originals/: 3 chapters", on="err"),
}

SERVERS: dict[str, Server] = {
    # Long-running: started under a terminal (and piped), awaited, stopped with Ctrl-C.
    "fptrack web": Server(("fptrack", "web", "--port", "{port}"), r"fptrack admin on http://127\.0\.0\.1:\d+/"),
    "fptrack demo": Server(("fptrack", "demo", "--home", "{tmp}/demo", "--port", "{port}", "--password",
                            "demo-words-1"), r"admin on http://127\.0\.0\.1:\d+/"),
    "fptrack worker": Server(("fptrack", "worker", "--concurrency", "1"), r"ready\.", needs="redis"),
    "fptrack beat": Server(("fptrack", "beat"), r"beat: Starting", needs="redis"),
}
