"""MkDocs hooks of the manual (declared in mkdocs.yml): the generated reference and the checks MkDocs lacks.

- ``on_page_markdown`` fills each ``<!-- reference: NAME -->`` line with the section :mod:`reference` (beside this
  file) makes from the code, and each ``<!-- include: PATH -->`` line with a file of the repository
  (``bench/results/*.md``: the measured tables, as the benchmarks wrote them), its headings moved under the page's;
- ``on_files`` adds the repository's files that pages show (:data:`SHOWN`: the demo report's picture) at their
  place in the site, so they are not kept twice;
- every external link must be well-formed (an absolute ``http(s)`` URL with a host name): this machine cannot
  fetch it, so this is all that can be checked offline; MkDocs itself validates the internal links and anchors
  (``validation:`` in mkdocs.yml). Each problem is a warning, which ``mkdocs build --strict`` makes an error.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mkdocs.plugins import get_plugin_logger

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reference  # docs/reference.py, beside this file

log = get_plugin_logger("newscorpus")
SHOWN = {"img/report.png": "demo/report.png"}  # site path: repository path
INCLUDE = re.compile(r"^<!-- include: (\S+) -->$", re.MULTILINE)
LINK = re.compile(r"\]\((?P<url>[a-z][a-z0-9+.-]*:[^)\s]*)[^)]*\)|<(?P<bare>https?://[^>\s]+)>", re.IGNORECASE)
HOST = re.compile(r"^(localhost|(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}|\d{1,3}(?:\.\d{1,3}){3})(:\d+)?$",
                  re.IGNORECASE)


def _include(match: re.Match[str], page: str) -> str:
    path = (reference.REPO / match.group(1)).resolve()
    if reference.REPO not in path.parents or not path.is_file():
        log.warning("%s: include of %s, which is no file of the repository", page, match.group(1))
        return ""
    text = path.read_text(encoding="utf-8")
    # The included file's headings go two levels down, under the page's own "## ..." section.
    return re.sub(r"^(#{1,4}) ", lambda heading: "#" * (len(heading.group(1)) + 2) + " ", text, flags=re.MULTILINE)


def malformed_links(markdown: str) -> list[str]:
    """Return the external links of a page's Markdown that are not well-formed http(s) URLs with a host name."""
    bad = []
    for match in LINK.finditer(markdown):
        url = match.group("url") or match.group("bare")
        parts = urlsplit(url)
        if parts.scheme == "mailto":
            continue
        if parts.scheme not in ("http", "https") or not HOST.match(parts.netloc.rsplit("@", 1)[-1]):
            bad.append(url)
    return bad


def on_files(files: Any, config: Any) -> Any:
    """Add the repository files of :data:`SHOWN` to the site."""
    from mkdocs.structure.files import File

    for site_path, repository_path in SHOWN.items():
        files.append(File.generated(config, site_path, abs_src_path=str(reference.REPO / repository_path)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Fill the generated sections and includes of a page; warn about malformed external links."""
    name = page.file.src_uri
    try:
        markdown = reference.fill(markdown)
    except KeyError as exc:
        log.warning("%s: no generated reference section %s", name, exc)
    markdown = INCLUDE.sub(lambda match: _include(match, name), markdown)
    outside_code = re.sub(r"```.*?```|`[^`\n]*`", "", markdown, flags=re.DOTALL)
    for url in malformed_links(outside_code):
        log.warning("%s: malformed external link %r", name, url)
    return markdown
