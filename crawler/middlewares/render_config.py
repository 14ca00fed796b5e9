"""The render middleware's settings: :class:`RenderConfig` (RENDER_*) and the Content-Security-Policy that
blocks resource types (:func:`block_policy`); the crawl's renderer and the offline one read the same ones."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar
from urllib.parse import urlsplit

from extraction.config import ComponentConfig
from extraction.pagetype.models import CROP_RATIO

# Playwright resource types, plus "subframe" for the document of an <iframe>.
RESOURCE_TYPES = frozenset({
    "document", "subframe", "stylesheet", "image", "media", "font", "script", "texttrack", "xhr", "fetch",
    "eventsource", "websocket", "manifest", "other",
})
# RENDER_BLOCK_RESOURCES types as Content-Security-Policy directives: Chromium refuses them itself, with no
# request interception. "websocket" keeps http(s) connections (fetch, XHR, EventSource) and refuses ws:/wss:;
# xhr, fetch and eventsource share connect-src and are refused together; documents and "other" cannot be.
_POLICY = {
    "font": "font-src 'none'", "media": "media-src 'none'", "texttrack": "media-src 'none'",
    "subframe": "frame-src 'none'", "manifest": "manifest-src 'none'", "image": "img-src 'none'",
    "script": "script-src 'unsafe-inline' 'unsafe-eval'", "stylesheet": "style-src 'unsafe-inline'",
    "websocket": "connect-src http: https: data: blob:",
}
_CONNECT = frozenset({"xhr", "fetch", "eventsource"})
SCREENSHOT_REGIONS = ("top", "full")
SCREENSHOT_FORMATS = ("png", "jpeg")


@dataclass(frozen=True)
class RenderConfig(ComponentConfig):
    """RENDER_* settings (docs/reference/settings.md); the offline renderer reads the same ones."""

    prefix: ClassVar[str] = "RENDER"
    enabled: bool = True  # off: every site over plain HTTP, no screenshots
    screenshots: bool = True  # off: pages are rendered without a screenshot
    viewport_width: int = 1280  # browser viewport, CSS px
    viewport_height: int = 800  # browser viewport, CSS px
    # "top": the region the page-type model reads (CROP_RATIO x viewport width); "full": the whole page,
    # up to max_height.
    screenshot_region: str = "top"
    screenshot_format: str = "png"  # png (lossless) or jpeg
    # Image pixels per CSS pixel (the browser's device scale factor): the page is laid out at viewport_width
    # CSS px either way. 0.5 gives a 640 x 1280 top region, which the page-type model reduces to 224 x 448;
    # rasterising and encoding a quarter of the pixels made rendering 24% faster (docs/guides/rendering.md).
    screenshot_scale: float = 0.5
    screenshot_quality: int = 80  # jpeg quality, 1-100
    # Full-page screenshots stop at this height (CSS px = image px). Chromium cannot capture beyond its
    # 16384-px texture limit; 8192 keeps the PNG of a long article around 1-3 MB.
    max_height: int = 8192
    load_timeout: float = 10.0  # s to wait for the load event after DOMContentLoaded
    screenshot_timeout: float = 20.0  # s
    # One capture at a time, page brought to front, for the top region too. Full-page captures always are:
    # several at once sometimes repeat the top of the page down the image (puppeteer#1576); viewport
    # captures of the top region never resize the page and run in parallel (docs/guides/rendering.md).
    serialize_screenshots: bool = False
    # Resource types Chromium refuses (a Content-Security-Policy on the served document, block_policy()); xhr, fetch
    # and eventsource only together; document and other never.
    block_resources: tuple[str, ...] = ("media", "font", "subframe", "texttrack", "websocket", "manifest")
    proxy: str = ""  # http://host:port for Chromium's own requests (crawler/settings.py: from $http_proxy)
    # Scripts of the page run when rendering: "on", "off", or "auto": on only when the fetched HTML shows less
    # than javascript_below characters of visible text (a page whose scripts build its content); the text
    # comes from the fetched HTML otherwise (SOURCE_*), and the screenshot shows the page as served. Measured
    # on 120 real pages: 25% more pages a second without scripts; 4.6% of 2,000 real pages are under 2,000
    # characters. A site may say `javascript: true|false` in the site list (docs/guides/rendering.md).
    javascript: str = "auto"
    javascript_below: int = 2000  # characters of visible text in the fetched HTML under which scripts run (auto)
    # Pages rendering at once: the renderer's own limit, apart from per-site politeness.
    concurrency: int = field(default=4, metadata={"setting": "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT"})
    # Pages of rendered sites fetched and not yet rendered, at most (0: 4 x the render concurrency). Without a
    # bound the HTTP fetches run far ahead of the renderer (a demo crawl killed three times had 87 of its 100
    # pages fetched and not completed at one kill or another): memory held by waiting pages, and work a killed
    # crawl fetches again.
    fetch_ahead: int = 0
    crash_retries: int = 1  # a page whose browser died under it is rendered again this many times
    # Longest a browser download (navigation, waiting for a page slot included) may take before it
    # fails as render_stuck; Playwright's own timeouts normally end it long before.
    deadline: float = 180.0
    max_size: int = field(default=0, metadata={"setting": "DOWNLOAD_MAXSIZE"})  # applied to the rendered HTML too

    def validate(self) -> None:
        if self.screenshot_region not in SCREENSHOT_REGIONS:
            raise ValueError(f"RENDER_SCREENSHOT_REGION must be one of {', '.join(SCREENSHOT_REGIONS)}, "
                             f"got {self.screenshot_region!r}")
        if self.screenshot_format not in SCREENSHOT_FORMATS:
            raise ValueError(f"RENDER_SCREENSHOT_FORMAT must be one of {', '.join(SCREENSHOT_FORMATS)}, "
                             f"got {self.screenshot_format!r}")
        if self.javascript not in ("auto", "on", "off"):
            raise ValueError(f"RENDER_JAVASCRIPT must be auto, on or off, got {self.javascript!r}")
        if not 0.1 <= self.screenshot_scale <= 4:
            raise ValueError(f"RENDER_SCREENSHOT_SCALE must be between 0.1 and 4, got {self.screenshot_scale}")
        if not 1 <= self.screenshot_quality <= 100:
            raise ValueError(f"RENDER_SCREENSHOT_QUALITY must be 1-100, got {self.screenshot_quality}")
        unknown = set(self.block_resources) - RESOURCE_TYPES
        if unknown:
            raise ValueError(f"RENDER_BLOCK_RESOURCES: unknown resource type(s) {', '.join(sorted(unknown))} "
                             f"(known: {', '.join(sorted(RESOURCE_TYPES))})")
        block_policy(self.block_resources)  # raises for what cannot be blocked
        if self.concurrency < 1:
            raise ValueError(f"PLAYWRIGHT_MAX_PAGES_PER_CONTEXT must be at least 1, got {self.concurrency}")
        if self.fetch_ahead < 0:
            raise ValueError(f"RENDER_FETCH_AHEAD must be >= 0, got {self.fetch_ahead}")
        for name, value, least in (("RENDER_VIEWPORT_WIDTH", self.viewport_width, 1),
                                   ("RENDER_VIEWPORT_HEIGHT", self.viewport_height, 1),
                                   ("RENDER_MAX_HEIGHT", self.max_height, 1),
                                   ("RENDER_JAVASCRIPT_BELOW", self.javascript_below, 0),
                                   ("RENDER_CRASH_RETRIES", self.crash_retries, 0),
                                   ("DOWNLOAD_MAXSIZE", self.max_size, 0)):
            if value < least:
                raise ValueError(f"{name} must be at least {least}, got {value}")
        for name, seconds in (("RENDER_LOAD_TIMEOUT", self.load_timeout), ("RENDER_SCREENSHOT_TIMEOUT",
                              self.screenshot_timeout), ("RENDER_DEADLINE", self.deadline)):
            if seconds <= 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {seconds}")
        if self.proxy and not proxy_address(self.proxy):
            raise ValueError(f"RENDER_PROXY must be an http://host:port address, got {self.proxy!r}")

    @property
    def fetch_ahead_pages(self) -> int:
        """Pages of rendered sites between the start of their fetch and the end of their render, at most."""
        return self.fetch_ahead or 4 * self.concurrency

    @property
    def capture_deadline(self) -> float:
        """Seconds the whole capture of one page may take (load wait, reads, two screenshots)."""
        return self.load_timeout + 2 * self.screenshot_timeout + 30.0

    @property
    def top_height(self) -> int:
        """Height of the "top" screenshot region: what the page-type model reads."""
        return round(CROP_RATIO * self.viewport_width)

    @property
    def top_capture(self) -> bool:
        """True when screenshots are of the top region, captured from a viewport that tall."""
        return self.screenshots and self.screenshot_region == "top"

    @property
    def render_height(self) -> int:
        """The browser's viewport height: the top region when that is captured (a viewport capture: no
        full-page resize, about 2x faster and free of the repeated-top glitch), else viewport_height."""
        return max(self.viewport_height, self.top_height) if self.top_capture else self.viewport_height


def proxy_address(url: str) -> bool:
    """Return True when ``url`` is a proxy address Chromium takes: http(s) or socks5 with a host (and port)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # raises ValueError for a port that is no number or over 65535
    except ValueError:
        return False
    return parts.scheme in ("http", "https", "socks5") and bool(parts.hostname)


def block_policy(types: tuple[str, ...] | list[str]) -> str:
    """Return the Content-Security-Policy that refuses the resource ``types`` (RENDER_BLOCK_RESOURCES).

    Raises ValueError for what a policy cannot refuse: documents and "other", and only some of xhr, fetch
    and eventsource (one directive, connect-src, governs the three).
    """
    wanted = set(types)
    if wanted & {"document", "other"}:
        raise ValueError("RENDER_BLOCK_RESOURCES: document and other cannot be blocked")
    connect = wanted & _CONNECT
    if connect and connect != _CONNECT:
        raise ValueError("RENDER_BLOCK_RESOURCES: xhr, fetch and eventsource are blocked together (connect-src), "
                         f"got only {', '.join(sorted(connect))}")
    directives = dict.fromkeys(_POLICY[kind] for kind in sorted(wanted - _CONNECT))
    if connect:
        directives = {d: None for d in directives if not d.startswith("connect-src")}
        directives["connect-src 'none'"] = None
    return "; ".join(directives)
