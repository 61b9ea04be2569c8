"""A novel site on 127.0.0.1 whose chapters only a browser, or a reader of its CSS, reads right.

    /                       the catalogue: links to every chapter page below
    /static/<n>.html        the chapter in the HTML, as most sites serve it
    /script/<n>.html        an empty <div id="content"> that an inline script fills from an
                            escaped string (innerHTML = "\\u9648\\u5b88…")
    /ajax/<n>.html          a page that fetches /api/chapter/<n>.json after load and writes
                            its HTML, with junk characters that /site.css (a stylesheet the
                            crawler never reads) hides: only the browser's computed style knows
    /hidden/<way>/<n>.html  the chapter in the HTML with junk characters between its
                            characters, hidden one way of HIDING each

`hidden_page(title, text, way)` builds a hidden-junk page without a server (the tests of
simtool and the extraction benchmark use it). Every page copies chapter n of the chapters
given; `site.copies` maps each chapter path to its index and `site.hits` counts requests.
"""
from __future__ import annotations

import html
import json
import random
import threading
from collections import Counter
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# How a page hides its junk: CSS class rule, inline style, element rule for visibility, an
# id-and-descendant rule for font-size, the hidden attribute, the font shorthand inline,
# and a rule overridden by a more specific or !important one (the real text stays shown).
HIDING = ("class", "inline", "visibility", "font-size", "attribute", "font-shorthand", "override")
JUNK = "鑫垚淼犇骉羴猋麤燚焱赑嚞暒曐昍晶"
_EVERY = 4  # a junk character after every 4th character of the chapter

_STYLES = {
    "class": ".x9{display:none} .x8{color:#333} @media print{.pr{display:none}}",
    "inline": "",
    "visibility": "i{visibility:hidden} i.keep{visibility:visible}",
    "font-size": "#j span{font-size:0}",
    "attribute": "",
    "font-shorthand": "",
    "override": ".c span{display:none} .c span.v{display:inline} .k{display:none !important} #j .k{display:inline}",
}


def _junk(way: str, ch: str) -> str:
    return {
        "class": f'<span class="x9">{ch}</span>',
        "inline": f'<span style="display: none">{ch}</span>',
        "visibility": f"<i>{ch}</i>",
        "font-size": f"<span>{ch}</span>",
        "attribute": f"<b hidden>{ch}</b>",
        "font-shorthand": f'<em style="font:0/0 a">{ch}</em>',
        "override": f'<span class="k">{ch}</span>',
    }[way]


def _shown(way: str, chunk: str) -> str:
    """A stretch of real text, in the markup that each way must keep showing."""
    chunk = html.escape(chunk)
    if way == "class":
        return f'<span class="pr">{chunk}</span>'  # hidden in print only
    if way == "visibility":
        return f'<i class="keep">{chunk}</i>'
    if way == "override":
        return f'<span class="v">{chunk}</span>'
    return chunk


def junked_line(line: str, way: str, rng: random.Random) -> str:
    out = []
    for i in range(0, len(line), _EVERY):
        out.append(_shown(way, line[i : i + _EVERY]))
        out.append(_junk(way, rng.choice(JUNK)))
    return "".join(out)


def hidden_page(title: str, text: str, way: str, *, seed: int = 0) -> str:
    """A chapter page with junk characters hidden `way` (one of HIDING) between the characters of `text`."""
    rng = random.Random(f"{seed}:{way}")
    lines = "<br>\n".join(junked_line(line.strip(), way, rng) for line in text.splitlines() if line.strip())
    wrapper = ' class="c"' if way == "override" else ""
    return _page(title, f'<div id="j"{wrapper}>{lines}</div>', style=_STYLES[way])


def _page(title: str, body: str, *, style: str = "", head: str = "", script: str = "") -> str:
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}_山城旧事_无弹窗小说网</title>"
        + (f"<style>{style}</style>" if style else "") + head
        + "</head><body>\n"
        '<div class="nav"><a href="/">首页</a> <a href="/">目录</a></div>\n'
        f"<h1>{html.escape(title)}</h1>\n{body}\n"
        '<div class="footer">本站所有小说均来自网友上传</div>\n'
        + (f"<script>{script}</script>" if script else "")
        + "</body></html>\n"
    )


def _html_lines(text: str) -> str:
    return "<br>".join(html.escape(line.strip()) for line in text.splitlines() if line.strip())


KINDS = ("static", "script", "ajax", "hidden")


def build_pages(chapters: Sequence[tuple[str, str]], kinds: Sequence[str] = KINDS,
                ) -> dict[str, tuple[str, bytes, int | None, str]]:
    """path -> (content type, body, index of the chapter copied or None, kind); the catalogue links the `kinds` given."""
    pages: dict[str, tuple[str, bytes, int | None, str]] = {}
    html_type = "text/html; charset=utf-8"
    links = []
    for n, (title, text) in enumerate(chapters, 1):
        k = n - 1
        pages[f"/static/{n}.html"] = (html_type, _page(title, f'<div id="content">{_html_lines(text)}</div>')
                                      .encode(), k, "static")
        escaped = json.dumps(_html_lines(text), ensure_ascii=True)  # every CJK character as \\uXXXX
        script = f"document.getElementById('content').innerHTML = {escaped};"
        pages[f"/script/{n}.html"] = (html_type, _page(title, '<div id="content"></div>', script=script).encode(),
                                      k, "script")
        rng = random.Random(n)
        junked = "<br>".join(
            "".join(html.escape(line[i : i + _EVERY]) + f'<span class="r7">{rng.choice(JUNK)}</span>'
                    for i in range(0, len(line), _EVERY))
            for line in (x.strip() for x in text.splitlines()) if line)
        pages[f"/api/chapter/{n}.json"] = ("application/json", json.dumps({"html": junked}).encode(), None, "json")
        fetch = (f"fetch('/api/chapter/{n}.json').then(r => r.json()).then(d => "
                 "{ setTimeout(() => { document.getElementById('content').innerHTML = d.html; }, 100); });")
        pages[f"/ajax/{n}.html"] = (html_type, _page(title, '<div id="content">正在加载……</div>', script=fetch,
                                                     head='<link rel="stylesheet" href="/site.css">').encode(),
                                    k, "ajax")
        for way in HIDING:
            pages[f"/hidden/{way}/{n}.html"] = (html_type, hidden_page(title, text, way, seed=n).encode(), k, "hidden")
        links += [(f"/{kind}/{n}.html", f"{title}（{kind}）") for kind in ("static", "script", "ajax") if kind in kinds]
        if "hidden" in kinds:
            links += [(f"/hidden/{way}/{n}.html", f"{title}（{way}）") for way in HIDING]
    pages["/site.css"] = ("text/css", b".r7{display:none}\nbody{font-size:16px}\n", None, "css")
    items = "\n".join(f'<li><a href="{p}">{html.escape(t)}</a></li>' for p, t in links)
    pages["/"] = (html_type, _page("山城旧事 章节目录", f'<ul class="chapters">{items}</ul>').encode(), None, "catalogue")
    pages["/robots.txt"] = ("text/plain", b"User-agent: *\nAllow: /\n", None, "robots")
    return pages


class RenderSite:
    """Serve `build_pages(chapters)` on 127.0.0.1 from a daemon thread; use as a context manager."""

    def __init__(self, chapters: Sequence[tuple[str, str]], kinds: Sequence[str] = KINDS):
        self.chapters = list(chapters)
        self.pages = build_pages(self.chapters, kinds)
        self.copies = {p: v[2] for p, v in self.pages.items() if v[2] is not None}
        self.kinds = {p: v[3] for p, v in self.pages.items()}
        self._hits: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def hits(self) -> Counter[str]:
        with self._lock:
            return Counter(self._hits)

    def paths(self, kind: str) -> list[str]:
        return [p for p, k in self.kinds.items() if k == kind]

    def __enter__(self) -> RenderSite:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                with site._lock:
                    site._hits[path] += 1
                found = site.pages.get(path)
                if found is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                ctype, body = found[0], found[1]
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
