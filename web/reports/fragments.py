"""The HTML of the big tables, rendered once per shared summary (web.reports.snapshots).

A work's report is a chapter-by-site matrix and a ranked list of up to every site; the
sites page lists every site. Rendering them costs more than reading their summary, so
twenty people opening the same report would render the same table twenty times. Here a
table's HTML is kept with the summary object it was rendered from: the same object (the
summary is still the one served) gives the same HTML; a new summary renders again.

A fragment template is rendered with only the summary and the arguments given here, the
same for whoever asks: it must not read the user, the session or a CSRF token (what
differs between people is passed as an argument, and so is part of the key).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from flask import render_template
from markupsafe import Markup

SIZE = 256  # fragments kept (a few per work, org and scope)


class Fragments:
    def __init__(self, size: int = SIZE):
        self.size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[Hashable, tuple[Any, Markup]] = OrderedDict()

    def render(self, template: str, summary: Any, context: Callable[[], dict[str, Any]], **args: Hashable) -> Markup:
        """`template` rendered with `context()` (made from the summary, called only when there
        is no HTML for this summary yet) and `args`."""
        key = (template, id(summary), tuple(sorted(args.items())))
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and hit[0] is summary:  # not another object that got the same id
                self._items.move_to_end(key)
                return hit[1]
        html = Markup(render_template(template, **context(), **args))
        with self._lock:
            self._items[key] = (summary, html)  # holding the summary keeps its id from being reused
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return html
