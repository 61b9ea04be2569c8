"""Which parts of a page its own CSS hides from a reader.

Pirate sites sprinkle junk characters through a chapter and hide them with CSS
(`.x9{display:none}`, `#j span{font-size:0}`, inline `visibility:hidden`, the
`hidden` attribute), so that a copy checker reading the markup sees a different
text from the reader. Here the page's own <style> blocks and style attributes
are read with a real CSS parser (tinycss2), selectors parsed by cssselect, and
the cascade decided for the three properties that hide text: `display`
(none hides the element and everything in it), `visibility` and `font-size`
(inherited: a child may show itself again). Specificity, order and !important
decide between rules; print-only media rules are ignored.

Bounded and linear in the page: at most MAX_CSS_CHARS of CSS are parsed and at
most MAX_SELECTORS selectors that touch those properties are kept; selectors
with sibling combinators, pseudo-classes or more than MAX_COMPOUNDS parts are
skipped. Selectors are matched in one walk down the tree, each element looking
up only the selectors whose last-checked part names its id, a class, its tag
or any element, with the ancestors' progress carried down as bit masks, so the
work is O(CSS + elements x selectors that could match each one), the latter
bounded by the cap. Pure: tinycss2, cssselect and lxml trees only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["hidden_parts", "MAX_SELECTORS", "MAX_CSS_CHARS", "MAX_COMPOUNDS"]

MAX_CSS_CHARS = 256 * 1024  # CSS read from one page's <style> blocks, in all
MAX_SELECTORS = 256  # selectors kept that set display, visibility or font-size
MAX_COMPOUNDS = 4  # "#a .b > p span" has 4; longer selectors are skipped
_MAX_NESTING = 3  # @media inside @supports inside @media
_OFFSCREEN_PROPS = ("left", "top", "margin-left", "text-indent")
_PROPS = ("display", "visibility", "font-size", "opacity", "color", *_OFFSCREEN_PROPS)
# Properties that take an element and all it holds out of sight, like display:none: opacity 0, and a
# position far off the page (left/top/margin-left/text-indent of -999px or less).
_GONE_PROPS = ("display", "opacity", "left", "top", "margin-left", "text-indent")
_OFFSCREEN_PX = -999.0
_STYLE_WORDS = re.compile(r"display|visibility|font|opacity|color|left|top|indent", re.I)  # else nothing here
_HIDDEN_VISIBILITY = frozenset(("hidden", "collapse"))
_NEVER_HIDDEN = frozenset(("html", "body"))  # "body{display:none}" until a script runs is not junk hiding
_INLINE = 1  # the rank of a style attribute above every selector; -1 for the `hidden` attribute


@dataclass(frozen=True)
class _Compound:
    """One part of a selector, e.g. p.a.b[hidden]: all of it must hold on one element."""

    tag: str | None
    id: str | None
    classes: frozenset
    attrs: tuple  # (name, operator, value): operator "exists", "=" or "~="

    def matches(self, el, classes: set) -> bool:
        if self.tag is not None and el.tag != self.tag:
            return False
        if self.id is not None and el.get("id") != self.id:
            return False
        if not self.classes <= classes:
            return False
        for name, op, value in self.attrs:
            got = el.get(name)
            if got is None or (op == "=" and got != value) or (op == "~=" and value not in got.split()):
                return False
        return True

    def key(self) -> tuple:
        """The index an element looks this part up by: its id, a class, its tag, or any element."""
        if self.id is not None:
            return ("#", self.id)
        if self.classes:
            return (".", min(self.classes))
        if self.tag is not None:
            return ("t", self.tag)
        return ("*",)


@dataclass
class _Rule:
    """One selector with the relevant declarations of its rule."""

    parts: tuple  # _Compound, left to right
    child: tuple  # child[j]: part j is joined to part j-1 by ">" (else by a space)
    rank: tuple  # (specificity a, b, c, order in the page)
    decls: dict  # property -> (state, important)


def hidden_parts(tree, css: str = "") -> tuple[list, list]:
    """(gone, muted): elements that display:none removes with all they hold (none inside another),
    and elements whose own text visibility or a zero font-size hides (their children may show).

    `css` is the text of the page's external stylesheets (a crawler fetches them), read before
    its <style> blocks, as a browser does with <link>s in the head. Only elements under <body>
    are judged; <html> and <body> themselves never hide."""
    if not css and not tree.xpath("boolean(//style or //*[@style] or //*[@hidden])"):
        return [], []  # most pages: nothing to read
    rules = _page_rules(tree, css)
    if not any(state is True for r in rules for state, _ in r.decls.values()) and not _inline_hiding(tree):
        return [], []  # rules that only show ("#content{font-size:18px}"): nothing to walk for
    index: dict = {}
    for n, rule in enumerate(rules):
        for j, part in enumerate(rule.parts):
            index.setdefault(part.key(), []).append((n, j))
    return _walk(tree, rules, index)


# ----------------------------------------------------------------------------- reading the CSS


def _page_rules(tree, css: str = "") -> list[_Rule]:
    import tinycss2

    rules: list[_Rule] = []
    budget = MAX_CSS_CHARS
    if css:
        css = css[:budget]
        budget -= len(css)
        _add_rules(tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True), rules, 0)
    for style in tree.iter("style"):
        if budget <= 0 or len(rules) >= MAX_SELECTORS:
            break
        if not _media_applies(style.get("media") or ""):
            continue
        css = (style.text or "")[:budget]
        budget -= len(css)
        nodes = tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True)
        _add_rules(nodes, rules, 0)
    return rules


def _add_rules(nodes, rules: list[_Rule], depth: int) -> None:
    import tinycss2

    for node in nodes:
        if len(rules) >= MAX_SELECTORS:
            return
        if node.type == "at-rule":
            keyword = node.lower_at_keyword
            if node.content is None or depth >= _MAX_NESTING or keyword not in ("media", "supports", "layer"):
                continue
            if keyword == "media" and not _media_applies(tinycss2.serialize(node.prelude)):
                continue
            inner = tinycss2.parse_rule_list(node.content, skip_comments=True, skip_whitespace=True)
            _add_rules(inner, rules, depth + 1)
        elif node.type == "qualified-rule":
            decls = _declarations(node.content)
            if decls:
                _add_selectors(tinycss2.serialize(node.prelude), decls, rules)


def _add_selectors(text: str, decls: dict, rules: list[_Rule]) -> None:
    import cssselect

    if len(text) > 1000:  # a selector list this long is not written to hide junk
        return
    try:
        selectors = cssselect.parse(text)
    except Exception:  # cssselect's SelectorError, and whatever odd input raises
        return
    for sel in selectors:
        if len(rules) >= MAX_SELECTORS:
            return
        if sel.pseudo_element is not None:  # ::before content is not the element's text
            continue
        chain = _chain(sel.parsed_tree)
        if chain is None:
            continue
        parts, child = chain
        rules.append(_Rule(parts, child, (*sel.specificity(), len(rules)), decls))


def _chain(tree) -> tuple[tuple, tuple] | None:
    """(parts, child) of a selector of descendant and child combinators, or None when it is beyond us."""
    parts: list = []
    child: list = []
    node = tree
    while type(node).__name__ == "CombinedSelector":
        if node.combinator not in (" ", ">"):
            return None
        part = _compound(node.subselector)
        if part is None:
            return None
        parts.append(part)
        child.append(node.combinator == ">")
        node = node.selector
        if len(parts) >= MAX_COMPOUNDS:
            return None
    part = _compound(node)
    if part is None:
        return None
    parts.append(part)
    child.append(False)
    parts.reverse()
    child.reverse()
    return tuple(parts), tuple(child)


def _compound(node) -> _Compound | None:
    tag = id_ = None
    classes: set = set()
    attrs: list = []
    while True:
        kind = type(node).__name__
        if kind == "Element":
            tag = node.element.lower() if node.element else None
            break
        if kind == "Class":
            classes.add(node.class_name)
        elif kind == "Hash":
            id_ = node.id
        elif kind == "Attrib" and node.operator in ("exists", "=", "~="):
            value = getattr(node.value, "value", node.value)  # a Token since cssselect 1.2
            attrs.append((node.attrib.lower(), node.operator, value))
        else:  # pseudo-classes, :not(), sibling tests: skipped rather than guessed
            return None
        node = node.selector
    return _Compound(tag, id_, frozenset(classes), tuple(attrs))


def _declarations(content) -> dict:
    """property -> (state, important) for display, visibility and font-size (and the font shorthand)."""
    import tinycss2

    out: dict = {}
    for decl in tinycss2.parse_blocks_contents(content, skip_comments=True, skip_whitespace=True):
        if decl.type != "declaration":
            continue
        name = decl.lower_name
        if name == "font":
            name = "font-size"
            state = _font_shorthand_state(decl.value)
        elif name in _PROPS:
            state = _state(name, decl.value)
        else:
            continue
        if state == "skip":
            continue
        prev = out.get(name)
        if prev is None or decl.important or not prev[1]:  # a later one wins unless the earlier is !important
            out[name] = (state, decl.important)
    return out


def _state(name: str, tokens) -> object:
    """display: True (none) / False; visibility: True (hidden) / False / None (inherit);
    font-size: True (zero) / False (a size of its own) / None (relative to the parent's)."""
    values = [t for t in tokens if t.type not in ("whitespace", "comment")]
    if not values:
        return "skip"
    first = values[0]
    if name == "opacity":  # 0 or 0%: nothing of it shows; not inherited, but nothing inside shows either
        return first.type in ("number", "percentage") and first.value <= 0
    if name in _OFFSCREEN_PROPS:  # far off the page to the left or the top
        return first.type == "dimension" and first.lower_unit == "px" and first.value <= _OFFSCREEN_PX
    if name == "color":  # transparent text: inherited, a child with a colour of its own shows
        if first.type == "ident":
            return None if first.lower_value in ("inherit", "unset", "currentcolor") else (
                first.lower_value == "transparent")
        if first.type == "function" and first.lower_name in ("rgba", "hsla", "rgb", "hsl"):
            args = [t for t in first.arguments if t.type in ("number", "percentage")]
            return len(args) == 4 and args[3].value == 0
        return False
    if first.type == "ident":
        word = first.lower_value
        if name == "display":
            return word == "none"
        if word in ("inherit", "unset"):
            return None
        if name == "visibility":
            return word in _HIDDEN_VISIBILITY
        # font-size keywords: the absolute ones show text; "smaller"/"larger" scale the parent's
        return None if word in ("smaller", "larger") else False
    if name != "font-size":
        return "skip"
    return _size_state(first)


def _size_state(token) -> object:
    if token.type in ("dimension", "percentage", "number"):
        if token.value == 0:
            return True
        if token.type == "percentage" or (token.type == "dimension" and token.lower_unit in ("em", "ex", "ch")):
            return None
        return False
    if token.type == "function":  # calc(), clamp(): not evaluated
        return "skip"
    return "skip"


def _font_shorthand_state(tokens) -> object:
    """The size in `font: italic bold 0/0 a`: the first length or percentage, or a bare 0."""
    for t in tokens:
        if t.type in ("dimension", "percentage") or (t.type == "number" and t.value == 0):
            return _size_state(t)
        if t.type == "ident" and t.lower_value in ("inherit", "unset"):
            return None
    return "skip"


def _media_applies(query: str) -> bool:
    """Whether a media query list applies on a screen: print- and speech-only queries do not."""
    query = query.strip().lower()
    if not query:
        return True
    for q in query.split(","):
        words = q.split()
        if not words:
            continue
        if words[0] == "only":
            words = words[1:]
        negate = bool(words) and words[0] == "not"
        if negate:
            words = words[1:]
        kind = words[0] if words and not words[0].startswith("(") else "all"
        on_screen = kind in ("all", "screen")
        if on_screen != negate:
            return True
    return False


# ----------------------------------------------------------------------------- the cascade


def _walk(tree, rules: list[_Rule], index: dict) -> tuple[list, list]:
    """One walk down the tree: each element's matching rules, its computed hiding, its children's context."""
    from lxml import etree

    gone: list = []
    muted: list = []
    root = tree.getroottree().getroot() if hasattr(tree, "getroottree") else tree
    by_tag = {k[1]: v for k, v in index.items() if k[0] == "t"}
    by_id = {k[1]: v for k, v in index.items() if k[0] == "#"}
    by_class = {k[1]: v for k, v in index.items() if k[0] == "."}
    anything = index.get(("*",), [])
    no_classes: frozenset = frozenset()
    # A frame per open element: (A, D, visibility hidden, font-size zero, under body, transparent colour).
    # A: rule -> mask of the parts that match this element with the parts before them matched above;
    # D: the same, or-ed over this element and its ancestors (for the descendant combinator).
    stack: list = [({}, {}, False, False, False, False)]
    walk = etree.iterwalk(root, events=("start", "end"))
    for event, el in walk:
        tag = el.tag
        if not isinstance(tag, str):
            continue
        if event == "end":
            stack.pop()
            continue
        frame = stack[-1]
        p_a, p_d, p_vis, p_zero, p_body, p_clear = frame
        if tag == "head":
            stack.append(frame)  # its "end" event still comes, and pops this
            walk.skip_subtree()
            continue
        candidates = []
        found = by_tag.get(tag)
        if found:
            candidates.append(found)
        if anything:
            candidates.append(anything)
        el_id = el.get("id")
        if el_id is not None and (found := by_id.get(el_id)):
            candidates.append(found)
        names = el.get("class")
        classes = set(names.split()) if names else no_classes
        for c in classes:
            if found := by_class.get(c):
                candidates.append(found)
        a: dict = {}
        best: dict = {}  # property -> (key, state)
        for group in candidates:
            for n, j in group:
                rule = rules[n]
                if j and not (((p_a if rule.child[j] else p_d).get(n, 0) >> (j - 1)) & 1):
                    continue
                if not rule.parts[j].matches(el, classes):
                    continue
                a[n] = a.get(n, 0) | (1 << j)
                if j == len(rule.parts) - 1:
                    for prop, (state, important) in rule.decls.items():
                        _better(best, prop, (important, 0, *rule.rank), state)
        if el.get("hidden") is not None:
            _better(best, "display", (False, -1), True)
        style = el.get("style")
        if style and _STYLE_WORDS.search(style):
            for prop, (state, important) in _inline(style).items():
                _better(best, prop, (important, _INLINE), state)
        if a:
            d = dict(p_d)
            for n, mask in a.items():
                d[n] = d.get(n, 0) | mask
        else:
            d = p_d
        in_body = p_body or tag == "body"
        if not best:
            if in_body and (p_vis or p_zero or p_clear) and tag not in _NEVER_HIDDEN:
                muted.append(el)
            stack.append((a, d, p_vis, p_zero, in_body, p_clear))  # a fresh A: ">" looks at the parent alone
            continue
        vis = _inherit(best.get("visibility"), p_vis)
        zero = _inherit(best.get("font-size"), p_zero)
        clear = _inherit(best.get("color"), p_clear)
        if in_body and tag not in _NEVER_HIDDEN:
            if any(best.get(prop, (None, False))[1] is True for prop in _GONE_PROPS):
                gone.append(el)
                stack.append(frame)
                walk.skip_subtree()
                continue
            if vis or zero or clear:
                muted.append(el)
        elif tag in _NEVER_HIDDEN:
            vis = zero = clear = False
        stack.append((a, d, vis, zero, in_body, clear))
    return gone, muted


def _better(best: dict, prop: str, key: tuple, state) -> None:
    prev = best.get(prop)
    if prev is None or key >= prev[0]:  # equal keys: the later declaration wins
        best[prop] = (key, state)


def _inherit(found, parent: bool) -> bool:
    if found is None or found[1] is None:
        return parent
    return bool(found[1])


def _inline_hiding(tree) -> bool:
    """Whether some element hides itself: the hidden attribute, or a style attribute that hides."""
    if tree.xpath("boolean(//*[@hidden])"):
        return True
    for style in tree.xpath("//@style"):
        if _STYLE_WORDS.search(style) and any(state is True for state, _ in _inline(style).values()):
            return True
    return False


_inline_cache: dict = {}


def _inline(style: str) -> dict:
    """The relevant declarations of a style attribute; the same attribute text is parsed once per page run."""
    got = _inline_cache.get(style)
    if got is None:
        got = _declarations(style[:4096])
        if len(_inline_cache) > 4096:
            _inline_cache.clear()
        _inline_cache[style] = got
    return got
