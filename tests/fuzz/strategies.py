"""Hypothesis strategies for hostile text and markup: every code point (lone surrogates,
NUL and other controls included), pieces that page and novel parsers look for, giant
tokens, deep nesting and broken markup."""
from __future__ import annotations

from hypothesis import strategies as st

# Every code point, surrogates included (hypothesis leaves out category Cs unless told).
ANY_CHAR = st.characters(codec=None, exclude_categories=())

PIECES = (
    "\x00", "\x01", "\x1f", "\x7f", "\ud800", "\udc00", "\udfff", "\ufffe", "\uffff", "\ufeff", "\u200b",
    "\r", "\n", "\r\n", "\t", "\u2028", "\u3000", "\xa0", " ",
    "a", "Z", "7", "０", "ａ", "啊", "天地", "他們", "第", "章", "回", "卷", "一", "百", "两", "Chapter ", "IV",
    "。", "，", "！", ".", "．", "/", ":", "-", "_", "|", "（", "）", "(", ")", "【", "】", "[", "]", "1/2",
    "www.", ".com", ".cn", "http://", "https://a.b.", "zhidao", "xian",
    "最新章节", "本章未完", "点击下一页继续阅读", "笔趣阁", "(本章完)", "一秒记住", "上一章", "目录",
)
MARKUP = (
    "<", ">", "&", ";", "&amp;", "&#xD800;", "&#0;", "&#x110000;", "&#99999999999;", "&nbsp", "<!--", "-->",
    "<!doctype html>", "<html>", "<head>", "<body>", "</body>", "<meta charset=gbk>", "<meta ",
    "<?xml version='1.0' encoding='gbk'?>", "<?pi x?>", "<![CDATA[", "]]>",
    "<title>", "</title>", "<h1>", "</h1>", "<p>", "</p>", "<p", "<br>", "<br/>", "<div>", "</div>",
    "<div id=content>", "<div class=ad>", "<div class='nav'>", "<span>", "</span>", "<a href='/2_2.html'>",
    "<a href='javascript:x'>", "<a href='http://[::1'>", "<a href=>", "</a>", "<script>", "</script>",
    "<style>", "</style>", "<table><tr><td>", "<ul><li>", "<li>", "<base href='http://x.com/a/'>",
    "<svg>", "<math>", "<template>", "<iframe>", "<textarea>", "<noscript>",
)
TAGS = ("div", "span", "p", "a", "b", "li", "ul", "table", "td", "h1", "article", "section", "font", "script")


def _run(strategy, max_size: int):
    return st.lists(strategy, max_size=max_size).map("".join)


# Ordinary-size text of any characters and of the pieces parsers look for.
texts = _run(st.one_of(ANY_CHAR, st.sampled_from(PIECES)), 120)

# A giant token: one character or piece repeated, the kind a minified blob or key mashing makes.
giant_tokens = st.builds(
    lambda piece, n: piece * n,
    st.sampled_from(("a", "7", "啊", ".", "a.", "www.", "<", "(", "（", " ", "\n", "第一", "ab1", "\x00", "&")),
    st.integers(0, 3000),
)

# Text as hostile pages hold it: pieces, any characters and giant tokens mixed.
hostile_texts = _run(st.one_of(texts, giant_tokens), 4)


def _nest(tag: str, depth: int, inner: str, close: bool) -> str:
    return f"<{tag}>" * depth + inner + (f"</{tag}>" * depth if close else "")


nested_markup = st.builds(_nest, st.sampled_from(TAGS), st.integers(0, 3000), texts, st.booleans())

# Markup: tags (often unclosed or stray), entities, text, giant tokens, deep nesting.
markup = _run(st.one_of(st.sampled_from(MARKUP), texts, giant_tokens, nested_markup), 12)

urls = st.one_of(
    st.sampled_from(("", "http://a.com/b/2.html", "https://x.test/book/1/2_2.html?page=2", "http://[::1", "mailto:x",
                     "http://a.com:99999/", "//a.com/x", "http://a.com/\ud800")),
    texts,
)
