"""The renderer's settings (``crawler.middlewares.render_config``) and the charset label it serves a page under
(``crawler.middlewares.render_result.web_label``)."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.utils.test import get_crawler

from crawler.middlewares.render_config import RenderConfig, block_policy
from crawler.middlewares.render_result import web_label
from extraction.pagetype.models import CROP_RATIO


def test_config_from_settings() -> None:
    crawler = get_crawler(settings_dict={"RENDER_MAX_HEIGHT": 4000, "DOWNLOAD_MAXSIZE": 123,
                                         "RENDER_BLOCK_RESOURCES": "media, image",
                                         "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": 3})
    config = RenderConfig.from_settings(crawler.settings)
    assert config.max_height == 4000 and config.max_size == 123 and not config.serialize_screenshots
    assert config.block_resources == ("media", "image") and config.concurrency == 3
    # The top region is what the page-type model reads, captured from a viewport that tall.
    assert config.top_capture and config.top_height == round(CROP_RATIO * config.viewport_width)
    assert config.render_height == config.top_height
    full = RenderConfig.from_settings({"RENDER_SCREENSHOT_REGION": "full"})
    assert not full.top_capture and full.render_height == full.viewport_height


@pytest.mark.parametrize(("setting", "value", "message"), [
    ("RENDER_SCREENSHOT_REGION", "middle", "RENDER_SCREENSHOT_REGION"),
    ("RENDER_SCREENSHOT_FORMAT", "gif", "RENDER_SCREENSHOT_FORMAT"),
    ("RENDER_SCREENSHOT_QUALITY", 0, "RENDER_SCREENSHOT_QUALITY"),
    ("RENDER_BLOCK_RESOURCES", "media,videos", "videos"),
    ("PLAYWRIGHT_MAX_PAGES_PER_CONTEXT", 0, "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT"),
    ("RENDER_JAVASCRIPT", "sometimes", "RENDER_JAVASCRIPT"),
    ("RENDER_SCREENSHOT_SCALE", 0, "RENDER_SCREENSHOT_SCALE"),
    ("RENDER_BLOCK_RESOURCES", "eventsource", "together"),
])
def test_config_refuses_values_that_cannot_work(setting: str, value: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RenderConfig.from_settings({setting: value})


def test_block_policy_is_a_content_security_policy() -> None:
    default = block_policy(RenderConfig().block_resources)
    assert default == ("font-src 'none'; manifest-src 'none'; media-src 'none'; frame-src 'none'; "
                       "connect-src http: https: data: blob:")
    assert block_policy(["xhr", "fetch", "eventsource", "websocket"]) == "connect-src 'none'"
    assert block_policy([]) == ""
    for bad in (["eventsource"], ["document"], ["other"]):
        with pytest.raises(ValueError, match="RENDER_BLOCK_RESOURCES"):
            block_policy(bad)


@pytest.mark.parametrize(("codec", "label"), [
    ("utf-8", "utf-8"), ("gb18030", "gb18030"), ("big5hkscs", "big5"), ("cp1252", "windows-1252"),
    ("iso8859-2", "iso-8859-2"), ("shift_jis", "shift-jis"), ("euc_kr", "euc-kr"), ("koi8-r", "koi8-r"),
    ("mac-cyrillic", "x-mac-cyrillic"), ("cp866", "cp866"),
])
def test_the_detected_charset_is_served_under_a_label_chromium_knows(codec: str, label: str) -> None:
    assert web_label(codec) == label
