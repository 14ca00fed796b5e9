"""The layout's rules: the crawl loads neither the evaluation package, nor training code, nor the demo."""

from __future__ import annotations

import subprocess
import sys

from tests.crawl_helpers import REPO

CODE = """
import sys
from scrapy.cmdline import _get_commands_dict
from scrapy.utils.project import get_project_settings
from scrapy.utils.misc import load_object

settings = get_project_settings()
_get_commands_dict(settings, True)  # every command module, as `scrapy` imports them at start-up
for path in [*settings.getdict("ITEM_PIPELINES"), *settings.getdict("DOWNLOADER_MIDDLEWARES"),
             *settings.getdict("DOWNLOAD_HANDLERS").values(), "crawler.spiders.news_sites.NewsSitesSpider",
             "extraction.process.process"]:
    load_object(path)
print(" ".join(sorted(m for m in sys.modules if m.split(".")[0] in ("evaluation", "demo", "bench")
                      or m.startswith("models.training"))))
"""


def test_crawl_imports_no_evaluation_training_or_demo_code() -> None:
    done = subprocess.run([sys.executable, "-c", CODE], cwd=REPO, capture_output=True, text=True, check=True,
                          timeout=120)
    assert done.stdout.strip() == "", done.stdout
