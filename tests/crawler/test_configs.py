"""Every setting is checked before a command runs: numbers, booleans and named choices that cannot work are refused
with the setting's name (crawler/configs.py)."""

from __future__ import annotations

import dataclasses

import pytest
from scrapy.settings import Settings

from crawler import settings as project_settings
from crawler.configs import CONFIGS, check_settings
from extraction.config import ComponentConfig, setting_name

# String settings that hold names of the user's own (paths, URLs, prefixes): anything goes there. Every other
# string setting is a choice among named values, which its config must check.
FREE_FORM = {"store", "dir", "model_dir", "gate_dir", "file", "warc_prefix", "proxy", "worker"}


def project() -> Settings:
    values = Settings()
    values.setmodule(project_settings)
    return values


def fields_of(kind: type) -> list[tuple[type[ComponentConfig], str, str]]:
    return [(config, spec.name, setting_name(config.prefix, spec.name, spec.metadata))
            for config in CONFIGS for spec in dataclasses.fields(config)
            if spec.init and type(spec.default) is kind]


def test_the_project_settings_pass() -> None:
    check_settings(project())


@pytest.mark.parametrize(("config", "field", "name"), fields_of(int) + fields_of(float),
                         ids=lambda value: value if isinstance(value, str) else "")
def test_every_number_setting_refuses_what_cannot_work(config: type[ComponentConfig], field: str, name: str) -> None:
    for value in ("many", "-5"):  # no setting of the project takes five below zero
        settings = project()
        settings.set(name, value)
        with pytest.raises(ValueError, match=name):
            check_settings(settings)


@pytest.mark.parametrize(("config", "field", "name"), [f for f in fields_of(str) if f[1] not in FREE_FORM],
                         ids=lambda value: value if isinstance(value, str) else "")
def test_every_named_choice_refuses_an_unknown_name(config: type[ComponentConfig], field: str, name: str) -> None:
    settings = project()
    settings.set(name, "no-such-choice")
    with pytest.raises(ValueError, match=name):
        check_settings(settings)


@pytest.mark.parametrize(("config", "field", "name"), fields_of(bool),
                         ids=lambda value: value if isinstance(value, str) else "")
def test_every_boolean_setting_takes_what_scrapys_take(config: type[ComponentConfig], field: str, name: str) -> None:
    for value, expected in (("True", True), ("false", False), ("1", True), ("0", False)):
        settings = project()
        settings.set(name, value)
        assert getattr(config.from_settings(settings), field) is expected
    for value in ("yes", "maybe", "2"):
        settings = project()
        settings.set(name, value)
        with pytest.raises(ValueError, match=f"{name} must be true or false"):
            check_settings(settings)


@pytest.mark.parametrize(("name", "value"), [("CONCURRENT_REQUESTS", "lots"), ("DOWNLOAD_DELAY", "a while"),
                                             ("ROBOTSTXT_OBEY", "sure"), ("AUTOTHROTTLE_ENABLED", "on"),
                                             ("LOGSTATS_INTERVAL", "nan")])
def test_scrapys_typed_settings_are_checked_too(name: str, value: str) -> None:
    settings = project()
    settings.set(name, value)
    with pytest.raises(ValueError, match=name):
        check_settings(settings)


def test_a_whole_number_default_of_scrapy_takes_a_fraction() -> None:
    settings = project()
    settings.set("DOWNLOAD_TIMEOUT", "7.5")  # Scrapy reads it with getfloat
    check_settings(settings)


@pytest.mark.parametrize("proxy", ["localhost", "ftp://proxy:21", "http://:8080", "http://proxy:99999"])
def test_a_proxy_must_be_an_address(proxy: str) -> None:
    settings = project()
    settings.set("RENDER_PROXY", proxy)
    with pytest.raises(ValueError, match="RENDER_PROXY"):
        check_settings(settings)


def test_every_component_config_is_checked() -> None:
    # A config class that CONFIGS leaves out would take a mistyped value silently (and miss the settings reference).
    import crawler.commands.crawl  # imports every component the crawl builds
    import crawler.spiders.news_sites  # noqa: F401

    def subclasses(kind: type) -> set[type]:
        return {sub for direct in kind.__subclasses__() for sub in {direct} | subclasses(direct)}

    defined = {kind for kind in subclasses(ComponentConfig) if kind.__module__.split(".")[0] != "tests"
               and not kind.__module__.startswith("extraction.config")}
    assert defined <= set(CONFIGS), sorted(kind.__name__ for kind in defined - set(CONFIGS))
