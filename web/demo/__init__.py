"""`fptrack demo`: the whole system on embedded defaults, with a pirate site served on 127.0.0.1.

The pirate novel site carries the traps real sites set for crawlers.

`build_site` turns a list of (title, text) chapters into every page of the site (pure, so a
benchmark can render pages without a server); `SampleSite` serves them from a thread. Each
page carries what a correct crawler must do with it (`Resource.kind`), so crawler tests can
check their results against `site.expected` and `site.hits`:

    home        "/": nav, ads, links to the catalogue, the news page and the traps
    catalogue   "/book/1/": chapter links, and links to every special page below
    chapter     a chapter page; encodings rotate over the chapters (GBK with <meta charset>,
                UTF-8, GBK bytes labelled utf-8 in the header, Big5 traditional, GBK with no
                charset anywhere); one chapter is split over two pages, one has broken HTML
    part        the second page of the split chapter (reached by its "下一页" link)
    unrelated   a news page of Chinese prose that copies nothing
    trap        "/calendar?d=...": every day links to the next and the previous one, forever
    duplicate   a page reached with "?sid=<random>": its links carry a fresh session id each time
    404         a chapter link that answers 404
    redirect    an old chapter URL that answers 301 to the real one
    slow        a page that answers after `slow_delay` seconds
    huge        a page of `huge_bytes` of HTML (a crawler should cap the download size)
    binary      a non-HTML file (application/octet-stream; an image without an extension)
    robots      a chapter under /vip/, which robots.txt forbids
    robots.txt  "/robots.txt"

With fewer than five chapters the encodings missing from the rotation are served as mirror
pages ("/big5/book/1/1.html"), so every feature exists even for a three-chapter book.

Its modules:
    web.demo.pages      `Resource`, the site's constants and the HTML builders of its pages
    web.demo.traps      the calendar and session-id traps made up per request, and `respond`
    web.demo.build      `build_site`
    web.demo.server     `SampleSite`, the HTTP server
    web.demo.chapters   `chapters_from_folder`
    web.demo.command    `fptrack demo`

May import: fingerprint, pagetext, ocr, clikit, tracker, crawler and web.
"""
