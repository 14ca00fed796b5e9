"""News metadata of a page (a package): headline, authors, dates, description, section, tags, image, canonical URL,
site name and language.

Every field is taken from the first source in this order that has it (``SOURCES`` names them, and
``Metadata.sources`` records which one gave each field):

1. ``json-ld``: ``<script type="application/ld+json">`` objects (``@graph`` and lists flattened);
   the article object (NewsArticle, Article, BlogPosting, ReportageNews, LiveBlogPosting, ...)
   first, then a WebPage.
2. ``microdata``: ``itemprop`` attributes (``headline``, ``author``, ``datePublished``, ...).
3. ``meta``: OpenGraph (``og:``, ``article:``), Twitter cards, Dublin Core and the usual ``<meta
   name>`` tags (``author``, ``pubdate``, ``parsely-*``, ``sailthru.*``, ``keywords``, ...).
4. ``time``: the first ``<time datetime>`` of the page (dates only; one right after "Updated" or "Last
   modified" gives ``date_modified``).
5. ``byline``: the page's byline and dateline text: elements named byline/author/date/time/meta
   and the first lines of the visible text from the headline on; English "By ..." and
   "Published/Updated ...", Chinese 作者 / 记者 / 撰文 / 编辑 / 责任编辑 for authors (来源 is the outlet,
   not an author) and 发布时间 / 时间 / 日期 with dates such as 2024年3月5日 10:21, 2024-03-05 10:21,
   9/17/2004 (the year last only when the day is over 12, alone or labelled) or 3小时前 (relative dates
   against the fetch time); labelled datelines (发布时间, 来源, Posted, By ...) before a date inside a sentence; for
   authors last, ``text``: the extracted text (a Chinese byline anywhere in it, papers often sign at
   the end, "（记者 某某）" or names alone in parentheses; an English one in its first lines). When the URL
   has a date, a publish date read here more than a day from it is passed over (a masthead's "today", a
   sidebar story's date): the next line's is read, else the URL's is the page's.
6. ``url``: a date in the URL's path (``/2024/03/05/``, ``/20240305/``, ``/2024-03-05``).
7. ``listing``: the feed's ``pubDate`` or the sitemap's ``news:publication_date`` / ``lastmod``
   the spider found the URL with (``Page.listed_date``).
8. ``htmldate``: htmldate's own search (its extensive mode off: the sources above cover it), only
   when none of the above gave a publish date.
9. ``modified``: the publish date of a page that gives none is its modified date (a page showing only
   "Last updated: ..."), as htmldate's ``original_date`` falls back to it; ``date_modified`` keeps it too.

Dates are ISO 8601: ``2024-03-05`` for a day, ``2024-03-05T10:21:00`` for a time without zone and
``2024-03-05T10:21:00+08:00`` when the page gives the zone; years outside ``MIN_YEAR`` to the
fetch year + 1 are refused. ``title`` is the headline without the site's name around it: the
learned chooser's pick among the title candidates (``extraction.title``), or without it the rule of
``choose_title`` (the ``<h1>`` when it is one of the candidates). ``lang`` is identified from the extracted text with
py3langid (Chinese as ``zh-Hans`` or ``zh-Hant`` by the share of characters that exist in only one
of the two scripts); ``lang_declared`` is the page's own ``<html lang>`` / Content-Language.
"""
