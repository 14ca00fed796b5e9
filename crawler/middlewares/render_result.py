"""What rendering one page produces and reads: :class:`RenderResult`, the script that reads the rendered
page's facts, the exceptions that end a capture, and the charset label the fetched document is served with."""

from __future__ import annotations

from dataclasses import dataclass, field

_PAGE_FACTS_JS = """() => {
  const root = document.documentElement, body = document.body;
  let height = Math.max(root ? root.scrollHeight : 0, body ? body.scrollHeight : 0);
  if (height <= window.innerHeight) {  // not taller than the (tall) viewport: measure the content itself
    height = Math.ceil(Math.max(root ? root.getBoundingClientRect().height : 0,
                                body ? body.getBoundingClientRect().bottom : 0));
  }
  const nav = performance.getEntriesByType("navigation")[0];  // how the document on show was loaded
  return {height: height, charset: document.characterSet,
          document: nav ? nav.name : location.href, load: nav ? nav.type : "navigate"};
}"""


@dataclass
class RenderResult:
    """What rendering produced for one page, beside the fetched response."""

    html: str | None = None  # the rendered DOM (None: not rendered, the fetched HTML stands alone)
    charset: str | None = None  # the charset the document was served to Chromium with
    page_height: int | None = None
    screenshot: bytes | None = None  # PNG or JPEG (RENDER_SCREENSHOT_FORMAT)
    screenshot_height: int | None = None
    javascript: bool = True  # the page's scripts ran
    flags: list[str] = field(default_factory=list)
    milliseconds: int | None = None  # from a renderer slot to the screenshot (the record's render_ms)
    # Where the page's scripts navigated its main frame (not followed; the spider checks the site's scope).
    navigated_to: str | None = None


# Python codec names that are not labels of the WHATWG Encoding Standard (what Chromium reads in a
# Content-Type), and the label of the same encoding.
_WEB_LABELS = {"big5hkscs": "big5", "mac-roman": "macintosh", "mac-cyrillic": "x-mac-cyrillic", "cp874": "windows-874",
               "euc_kr": "euc-kr", "euc_jp": "euc-jp", "iso2022_jp": "iso-2022-jp", "utf-16-le": "utf-16le",
               "utf-16-be": "utf-16be"}


def web_label(codec: str) -> str:
    """Return the WHATWG label Chromium understands for a Python codec name (``big5hkscs`` -> ``big5``)."""
    name = _WEB_LABELS.get(codec, codec)
    if name.startswith("iso8859-"):
        return "iso-8859-" + name.removeprefix("iso8859-")
    if name.startswith("cp125"):
        return "windows-" + name.removeprefix("cp")
    return name.replace("_", "-")


def _without_dom(result: RenderResult) -> RenderResult:
    """A failed render keeps its flags and nothing half-made."""
    return RenderResult(charset=result.charset, flags=result.flags)


class _CaptureStuck(Exception):
    """Reading the rendered page took over RenderConfig.capture_deadline."""


class _LeftDocument(Exception):
    """The page on show is not the document served from the fetched bytes (a script navigated or reloaded)."""

    def __init__(self, load: str, url: str) -> None:
        self.load, self.url = load, url
        super().__init__(f"{load} {url}")
