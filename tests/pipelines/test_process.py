"""The WARC files' warcinfo fields and the settings a worker gets (pipelines/process.py)."""

from __future__ import annotations

from scrapy.settings import Settings

from pipelines.process import WARCINFO, warcinfo, worker_settings


def test_warcinfo_names_the_settings_the_crawl_was_given_and_no_secrets() -> None:
    settings = Settings({"ROBOTSTXT_OBEY": True, "USER_AGENT": "bot/1"}, priority="project")
    settings.set("TEMPLATES_LEARN", False, priority="cmdline")
    settings.set("RENDER_PROXY", "http://user:pw@proxy:3128", priority="cmdline")
    settings.set("HTTPPROXY_AUTH_ENCODING", "latin-1", priority="cmdline")
    settings.set("DOWNLOAD_TIMEOUT", 180, priority="default")  # Scrapy's own default: not the crawl's choice
    info = warcinfo(settings, {"blocks": "abc"})
    assert info["robots"] == "obey" and info["http-header-user-agent"] == "bot/1"
    assert info["models"] == {"blocks": "abc"}
    assert info["settings"]["TEMPLATES_LEARN"] is False and info["settings"]["USER_AGENT"] == "bot/1"
    assert "DOWNLOAD_TIMEOUT" not in info["settings"]
    assert not any("PROXY" in name for name in info["settings"])


def test_workers_get_the_warcinfo_as_plain_values() -> None:
    settings = Settings({"ARCHIVE_DIR": "/tmp/x"}, priority="project")
    values = worker_settings(settings, {"settings": {"A": object()}, "robots": "obey"})
    assert values["ARCHIVE_DIR"] == "/tmp/x"
    assert values[WARCINFO]["robots"] == "obey" and isinstance(values[WARCINFO]["settings"]["A"], str)
