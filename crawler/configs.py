"""Every setting the project reads, checked once before a command starts.

Each component parses its settings into a frozen config (:class:`extraction.config.ComponentConfig`), whose
``validate()`` refuses what cannot work. :data:`CONFIGS` lists them all, and :func:`check_settings` builds each
from the command's settings before anything runs, so a mistyped value ends the command with one line naming the
setting (``error: BLOCKS_FAVOR must be one of balanced, precision, recall, got 'precison'``), exit status 2,
instead of a traceback from an extraction worker in the middle of a crawl. The typed settings of Scrapy and of
``crawler/settings.py`` (numbers and booleans) are checked the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scrapy.settings import BaseSettings, default_settings

from crawler import settings as project_settings
from crawler.extensions import ReportConfig
from crawler.fetch_policy import FetchPolicyConfig
from crawler.leases import LeaseConfig
from crawler.middlewares.render_config import RenderConfig
from crawler.sitetypes import SiteTypesConfig
from crawler.state import CrawlStateConfig
from extraction.config import ComponentConfig, coerce
from extraction.dedup import DedupConfig
from extraction.process import BlocksConfig, PageTypeConfig, SourceConfig, TitleConfig, Web2TextConfig
from extraction.workers import WorkersConfig
from pipelines.archive import ArchiveConfig
from templates_db.library import TemplatesConfig

# Every component config of the project: what check_settings builds, and what the settings reference lists.
CONFIGS: tuple[type[ComponentConfig], ...] = (
    RenderConfig, SourceConfig, PageTypeConfig, SiteTypesConfig, BlocksConfig, TitleConfig, Web2TextConfig,
    TemplatesConfig, WorkersConfig, ArchiveConfig, DedupConfig, CrawlStateConfig, LeaseConfig,
    FetchPolicyConfig, ReportConfig,
)


def typed_settings() -> Iterator[tuple[str, Any]]:
    """Yield (name, default) for Scrapy's and the project's settings whose default is a number or a boolean."""
    seen = set()
    for module in (project_settings, default_settings):
        for name in dir(module):
            value = getattr(module, name)
            if name.isupper() and name not in seen and isinstance(value, bool | int | float):
                seen.add(name)
                yield name, value


def check_settings(settings: BaseSettings) -> None:
    """Raise ValueError, naming the setting, for the first value no component can work with."""
    for config in CONFIGS:
        config.from_settings(settings)
    for name, default in typed_settings():
        value = settings.get(name)
        if value is not None and value != default:
            # Scrapy reads some whole-number defaults as floats (DOWNLOAD_TIMEOUT = 180): a number is all it asks.
            coerce(name, value, default if isinstance(default, bool) else float(default))
