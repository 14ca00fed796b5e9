"""``newscorpus``: the project's commands from any directory, and what every command shares.

``make setup`` installs the checkout into its virtual environment (``pip install -e .``), with this console
script. ``scrapy`` finds the project through ``scrapy.cfg`` in the working directory, so outside the checkout it
knows none of the project's commands; ``newscorpus`` names the project's settings module itself, so
``newscorpus crawl news_sites``, ``newscorpus extract page.html`` or ``newscorpus corpus feeds/`` work wherever the
user is. Paths given on the command line are read from the working directory, as with ``scrapy``; the project's
own files (models, the bundled site list, the template store) are found from the checkout wherever it runs.

:class:`ProjectCommand` is the mixin of every project command (``scrapy crawl`` included): one error style, a
usage error, a bad option, a bad ``-s`` value and a bad argument all end in one line ``error: ...`` on standard
error and exit status 2, with no traceback; the settings are checked (:func:`crawler.configs.check_settings`)
before the command does anything; help text keeps its own line breaks and only argparse's section titles become
headings.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from typing import Any, NoReturn

from scrapy.commands import ScrapyHelpFormatter
from scrapy.exceptions import UsageError

SETTINGS_MODULE = "crawler.settings"
USAGE_ERROR = 2  # exit status of a command given something it cannot do (argparse's and Scrapy's own)


# The project's commands, in the order a user meets them (``newscorpus`` alone lists them; Scrapy's own commands
# work too: ``newscorpus shell URL``, ``newscorpus settings --get NAME``).
COMMANDS = ("crawl", "corpus", "extract", "reextract", "report", "state", "templates", "evaluate")


def main(argv: list[str] | None = None) -> None:
    """Run a project command (``newscorpus COMMAND [options] [args]``); exits with the command's status."""
    os.environ["SCRAPY_SETTINGS_MODULE"] = SETTINGS_MODULE
    arguments = sys.argv[1:] if argv is None else argv
    if not arguments or arguments[0] in ("-h", "--help", "help"):
        print(usage())
        raise SystemExit(0)
    from scrapy.cmdline import execute

    execute(["newscorpus", *arguments])


def usage() -> str:
    """Return what ``newscorpus`` alone prints: the project's commands, one line each."""
    import importlib

    lines = ["Usage: newscorpus COMMAND [options] [args]   (newscorpus COMMAND --help for a command's options)", ""]
    for name in COMMANDS:
        command = importlib.import_module(f"crawler.commands.{name}").Command()
        lines.append(f"  {name:<10} {command.short_desc()}")
    lines += ["", "The same commands run as `scrapy COMMAND` in the checkout. Scrapy's own (shell, fetch, settings, "
              "...) work too."]
    return "\n".join(lines)


def fail(message: str) -> NoReturn:
    """End the command with the project's one error line (``error: message``) and exit status 2."""
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()
    raise SystemExit(USAGE_ERROR)


class HelpFormatter(ScrapyHelpFormatter):
    """Scrapy's help layout with two mends: only argparse's own section titles (one unindented line ending in
    ":") become underlined headings, not an option's help whose wrapped line happens to end in ":"; and the
    description keeps its paragraphs and indented lines (lists, examples) as written."""

    def format_part_strings(self, part_strings: list[str]) -> list[str]:
        if part_strings and part_strings[0].startswith("usage: "):
            part_strings[0] = "Usage\n=====\n  " + part_strings[0].removeprefix("usage: ")
        # An option's first help line is a part of its own after the option's name (which ends without a newline).
        headings = [index for index, part in enumerate(part_strings)
                    if part.endswith(":\n") and part.count("\n") == 1 and not part[:1].isspace()
                    and (index == 0 or part_strings[index - 1].endswith("\n"))]
        for index in reversed(headings):
            char = "-" if "Global Options" in part_strings[index] else "="
            title = part_strings[index].removesuffix(":\n").title()
            part_strings[index] = title
            part_strings.insert(index + 1, f"\n{char * len(title)}\n")
        return part_strings

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for paragraph in text.strip("\n").split("\n\n"):
            lines = paragraph.split("\n")
            if any(line[:1].isspace() for line in lines):  # an indented block: as written
                paragraphs.append("\n".join(indent + line for line in lines))
            else:
                paragraphs.append(textwrap.fill(" ".join(lines), width, initial_indent=indent,
                                                subsequent_indent=indent))
        return "\n\n".join(paragraphs)


def _error(message: str) -> NoReturn:
    fail(message)


class ProjectCommand:
    """Mixin (first base) of the project's commands: see the module docstring."""

    settings: Any

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)  # type: ignore[misc]
        parser.formatter_class = HelpFormatter
        parser.error = _error  # type: ignore[method-assign]  # argparse's and Scrapy's UsageError path both end here

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)  # type: ignore[misc]  # -s, -L, --logfile
        # Scrapy parses known options only and leaves the rest among the arguments: a mistyped option would be
        # read as a file name.
        unknown = [arg for arg in args if arg.startswith("-") and arg != "-"]
        if unknown:
            raise UsageError(f"unknown option {unknown[0]} (--help lists the options)")
        from crawler.configs import check_settings

        try:
            check_settings(self.settings)
        except ValueError as exc:
            raise UsageError(str(exc)) from None


if __name__ == "__main__":
    main()
