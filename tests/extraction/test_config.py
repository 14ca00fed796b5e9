"""Per-component frozen configs built from settings: names, types, overrides, errors."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar

import pytest
from scrapy.settings import Settings

from crawler.middlewares.render import RenderConfig
from extraction.config import ComponentConfig
from extraction.process import BlocksConfig, PageTypeConfig
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


def test_bad_values_name_the_setting() -> None:
    with pytest.raises(ValueError, match="DEMOX_PAGES must be a number"):
        DemoConfig.from_settings({"DEMOX_PAGES": "many"})
    with pytest.raises(ValueError, match="DEMOX_ENABLED must be true or false"):
        DemoConfig.from_settings({"DEMOX_ENABLED": "perhaps"})


def test_overrides_win_and_configs_are_frozen() -> None:
    config = TemplatesConfig.from_settings({"TEMPLATES_LEARN": "true"}, learn=False)
    assert config.learn is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.learn = True  # type: ignore[misc]


def test_project_components() -> None:
    render = RenderConfig.from_settings(Settings({"RENDER_MAX_HEIGHT": 4000, "DOWNLOAD_MAXSIZE": 123}))
    assert (render.max_height, render.max_size, render.viewport_width) == (4000, 123, 1280)
    assert PageTypeConfig.from_settings({"PAGETYPE_ENABLED": "0"}).enabled is False
    assert BlocksConfig.from_settings({"BLOCKS_MODEL_DIR": "/m"}).model_dir == "/m"
    with pytest.raises(ValueError, match="TEMPLATES_MIN_FREQUENCY"):
        TemplatesConfig.from_settings({"TEMPLATES_MIN_FREQUENCY": 20})
    with pytest.raises(ValueError, match="TEMPLATES_STORE"):
        TemplatesConfig.from_settings({"TEMPLATES_STORE": ""})
