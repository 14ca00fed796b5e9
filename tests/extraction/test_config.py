"""Per-component frozen configs built from settings: names, types, overrides, errors."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest
from scrapy.settings import Settings

from crawler.middlewares.render_config import RenderConfig
from extraction.config import ComponentConfig
from extraction.process import BlocksConfig, PageTypeConfig
from pipelines.archive import ArchiveConfig
from templates_db.library import TemplatesConfig


@dataclass(frozen=True)
class DemoConfig(ComponentConfig):
    prefix: ClassVar[str] = "DEMOX"
    enabled: bool = True
    pages: int = 3
    share: float = 0.5
    name: str = "x"
    limit: int = field(default=0, metadata={"setting": "OTHER_LIMIT"})


def test_defaults_live_in_the_dataclass() -> None:
    assert DemoConfig.from_settings({}) == DemoConfig()
    assert DemoConfig.setting_names() == {"enabled": "DEMOX_ENABLED", "pages": "DEMOX_PAGES", "share": "DEMOX_SHARE",
                                          "name": "DEMOX_NAME", "limit": "OTHER_LIMIT"}


@pytest.mark.parametrize("settings", [
    {"DEMOX_ENABLED": "false", "DEMOX_PAGES": "7", "DEMOX_SHARE": "0.25", "DEMOX_NAME": "y", "OTHER_LIMIT": 9},
    Settings({"DEMOX_ENABLED": False, "DEMOX_PAGES": 7, "DEMOX_SHARE": 0.25, "DEMOX_NAME": "y", "OTHER_LIMIT": "9"}),
])
def test_values_are_read_and_converted(settings: object) -> None:
    assert DemoConfig.from_settings(settings) == DemoConfig(False, 7, 0.25, "y", 9)


@pytest.mark.parametrize(("settings", "expected"), [
    ({"DEMOX_ENABLED": "false"}, {"enabled": False}), ({"DEMOX_ENABLED": "0"}, {"enabled": False}),
    ({"DEMOX_ENABLED": " False "}, {"enabled": False}),
    ({"DEMOX_ENABLED": "TRUE"}, {"enabled": True}), ({"DEMOX_ENABLED": "1"}, {"enabled": True}),
    ({"DEMOX_ENABLED": 0}, {"enabled": False}), ({"DEMOX_ENABLED": None}, {"enabled": True}),
    ({"DEMOX_PAGES": "3"}, {"pages": 3}), ({"DEMOX_PAGES": "0"}, {"pages": 0}),
    ({"DEMOX_SHARE": "3"}, {"share": 3.0}), ({"DEMOX_SHARE": 1}, {"share": 1.0}),
    ({"DEMOX_NAME": 5}, {"name": "5"}), ({"OTHER_LIMIT": "12"}, {"limit": 12}),
])
def test_each_type_is_coerced(settings: dict[str, object], expected: dict[str, Any]) -> None:
    config = DemoConfig.from_settings(settings)
    assert config == dataclasses.replace(DemoConfig(), **expected)
    (name,) = expected
    assert type(getattr(config, name)) is type(getattr(DemoConfig(), name))  # 3.0, not 3; "5", not 5


@pytest.mark.parametrize(("settings", "message"), [
    ({"DEMOX_PAGES": "many"}, "DEMOX_PAGES must be a whole number, got 'many'"),
    ({"DEMOX_SHARE": "half"}, "DEMOX_SHARE must be a number"),
    ({"DEMOX_ENABLED": "perhaps"}, "DEMOX_ENABLED must be true or false \\(or 1 or 0\\), got 'perhaps'"),
    ({"DEMOX_ENABLED": "off"}, "DEMOX_ENABLED must be true or false"),  # Scrapy's spellings only: one rule
    ({"DEMOX_PAGES": "3.5"}, "DEMOX_PAGES must be a whole number"),
    ({"DEMOX_SHARE": "nan"}, "DEMOX_SHARE must be a number"),
    ({"DEMOX_ENABLED": 2}, "DEMOX_ENABLED must be true or false"),
    ({"OTHER_LIMIT": "lots"}, "OTHER_LIMIT must be a whole number"),  # the setting read, not the field
])
def test_bad_values_name_the_setting(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DemoConfig.from_settings(settings)
    with pytest.raises(ValueError, match=message):
        DemoConfig.from_settings(Settings(settings))


def test_overrides_win_and_configs_are_frozen() -> None:
    config = TemplatesConfig.from_settings({"TEMPLATES_LEARN": "true"}, learn=False)
    assert config.learn is False
    assert DemoConfig.from_settings({"DEMOX_PAGES": "many"}, pages=4).pages == 4  # an overridden setting is not read
    with pytest.raises(ValueError, match="TEMPLATES_BATCH_PAGES"):  # overrides are validated too
        TemplatesConfig.from_settings({}, batch_pages=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.learn = True  # type: ignore[misc]


def test_project_components() -> None:
    render = RenderConfig.from_settings(Settings({"RENDER_MAX_HEIGHT": 4000, "DOWNLOAD_MAXSIZE": 123}))
    assert (render.max_height, render.max_size, render.viewport_width) == (4000, 123, 1280)
    assert RenderConfig.setting_names()["max_size"] == "DOWNLOAD_MAXSIZE"
    assert RenderConfig.from_settings({"RENDER_MAX_SIZE": 5}).max_size == RenderConfig().max_size  # not read
    assert RenderConfig.from_settings(Settings()).max_size == Settings().getint("DOWNLOAD_MAXSIZE")
    archive = ArchiveConfig.from_settings(Settings({"ARCHIVE_DIR": "/data/corpus", "ARCHIVE_ENABLED": "False"}))
    assert (archive.dir, archive.enabled) == ("/data/corpus", False)
    assert PageTypeConfig.from_settings({"PAGETYPE_ENABLED": "0"}).enabled is False
    assert BlocksConfig.from_settings({"BLOCKS_MODEL_DIR": "/m"}).model_dir == "/m"
    with pytest.raises(ValueError, match="TEMPLATES_MIN_FREQUENCY"):
        TemplatesConfig.from_settings({"TEMPLATES_MIN_FREQUENCY": 20})
    with pytest.raises(ValueError, match="TEMPLATES_STORE"):
        TemplatesConfig.from_settings({"TEMPLATES_STORE": ""})


@pytest.mark.parametrize(("settings", "setting"), [
    ({"TEMPLATES_STORE": ""}, "TEMPLATES_STORE"),
    ({"TEMPLATES_BATCH_PAGES": 0}, "TEMPLATES_BATCH_PAGES"),
    ({"TEMPLATES_MIN_FREQUENCY": 0}, "TEMPLATES_MIN_FREQUENCY"),
    ({"TEMPLATES_BATCH_PAGES": 5, "TEMPLATES_MIN_FREQUENCY": 6}, "TEMPLATES_MIN_FREQUENCY"),
    ({"TEMPLATES_DRIFT_RATIO": 0}, "TEMPLATES_DRIFT_RATIO"),
    ({"TEMPLATES_DRIFT_RATIO": "1"}, "TEMPLATES_DRIFT_RATIO"),
    ({"TEMPLATES_BATCH_PAGES": "ten"}, "TEMPLATES_BATCH_PAGES"),
])
def test_templates_config_refuses_what_cannot_work(settings: dict[str, object], setting: str) -> None:
    with pytest.raises(ValueError, match=setting):
        TemplatesConfig.from_settings(settings)


def test_templates_config_boundaries_that_work() -> None:
    config = TemplatesConfig.from_settings({"TEMPLATES_BATCH_PAGES": "1", "TEMPLATES_MIN_FREQUENCY": "1",
                                            "TEMPLATES_DRIFT_RATIO": "0.99", "TEMPLATES_LEARN": "false"})
    assert (config.batch_pages, config.min_frequency, config.drift_ratio, config.learn) == (1, 1, 0.99, False)
    assert TemplatesConfig.from_settings({"TEMPLATES_BATCH_PAGES": 5, "TEMPLATES_MIN_FREQUENCY": 5}).min_frequency == 5


def test_a_fraction_for_a_whole_number_is_refused() -> None:
    assert DemoConfig.from_settings({"DEMOX_PAGES": 4.0}).pages == 4
    with pytest.raises(ValueError, match="DEMOX_PAGES must be a whole number"):
        DemoConfig.from_settings({"DEMOX_PAGES": 3.7})
