"""``newscorpus``: the project's commands from any directory, the same as ``scrapy ...`` in the checkout.

``make setup`` installs the checkout into its virtual environment (``pip install -e .``), with this console
script. ``scrapy`` finds the project through ``scrapy.cfg`` in the working directory, so outside the checkout it
knows none of the project's commands; ``newscorpus`` names the project's settings module itself, so
``newscorpus crawl news_sites``, ``newscorpus extract page.html`` or ``newscorpus corpus feeds/`` work wherever the
user is. Paths given on the command line are read from the working directory, as with ``scrapy``.
"""

from __future__ import annotations

import os
import sys

SETTINGS_MODULE = "crawler.settings"


def main(argv: list[str] | None = None) -> None:
    """Run a project command (``newscorpus COMMAND [options] [args]``); exits with the command's status."""
    os.environ["SCRAPY_SETTINGS_MODULE"] = SETTINGS_MODULE
    from scrapy.cmdline import execute

    execute(["newscorpus", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    main()
