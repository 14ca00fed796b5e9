"""The WARC files' warcinfo fields and the settings a worker gets (pipelines/process.py)."""

from __future__ import annotations

from scrapy.settings import Settings

from pipelines.process import REDACTED, WARCINFO, plain_setting, warcinfo, worker_settings


def test_warcinfo_names_the_settings_the_crawl_was_given_and_no_secrets() -> None:
    settings = Settings({"ROBOTSTXT_OBEY": True, "USER_AGENT": "bot/1"}, priority="project")
    settings.set("TEMPLATES_LEARN", False, priority="cmdline")
    settings.set("RENDER_PROXY", "http://user:pw@proxy:3128", priority="cmdline")
    settings.set("FEEDS", {"s3://AKIA:s3cr3t@bucket/%(time)s.jsonl": {"format": "jsonlines"}}, priority="cmdline")
    settings.set("DEFAULT_REQUEST_HEADERS", {"Accept": "text/html", "Authorization": "Bearer abc"}, priority="project")
    settings.set("DOWNLOAD_TIMEOUT", 180, priority="default")  # Scrapy's own default: not the crawl's choice
    info = warcinfo(settings, {"blocks": "abc"})
    chosen = info["settings"]
    assert info["robots"] == "obey" and info["http-header-user-agent"] == "bot/1"
    assert info["models"] == {"blocks": "abc"}
    assert chosen["TEMPLATES_LEARN"] is False and chosen["USER_AGENT"] == "bot/1"
    assert "DOWNLOAD_TIMEOUT" not in chosen
    assert chosen["RENDER_PROXY"] == REDACTED
    assert chosen["FEEDS"] == {"s3://bucket/%(time)s.jsonl": {"format": "jsonlines"}}  # a dict, credentials out
    assert chosen["DEFAULT_REQUEST_HEADERS"] == {"Accept": "text/html", "Authorization": REDACTED}
    assert "s3cr3t" not in str(info) and "abc\"" not in str(chosen) and "pw@" not in str(info)


def test_plain_settings() -> None:
    assert plain_setting(Settings({"A": {"b": 1}})["A"]) == {"b": 1}
    assert plain_setting(("x", 2, None)) == ["x", 2, None]
    assert plain_setting(int) == "<class 'int'>"
    assert plain_setting("ftp://me:pw@host/path") == "ftp://host/path"


def test_workers_get_the_warcinfo_as_plain_values() -> None:
    settings = Settings({"ARCHIVE_DIR": "/tmp/x"}, priority="project")
    values = worker_settings(settings, {"settings": {"A": object()}, "robots": "obey"})
    assert values["ARCHIVE_DIR"] == "/tmp/x"
    assert values[WARCINFO]["robots"] == "obey" and isinstance(values[WARCINFO]["settings"]["A"], str)


def test_workers_get_every_model_setting() -> None:
    settings = Settings({"TITLE_ENABLED": False, "TITLE_MODEL_DIR": "/m/title", "PAGETYPE_MODEL_DIR": "/m/p",
                         "BLOCKS_MODEL_DIR": "/m/b"}, priority="project")
    values = worker_settings(settings)
    assert (values["TITLE_ENABLED"], values["TITLE_MODEL_DIR"]) == (False, "/m/title")
    assert (values["PAGETYPE_MODEL_DIR"], values["BLOCKS_MODEL_DIR"]) == ("/m/p", "/m/b")
