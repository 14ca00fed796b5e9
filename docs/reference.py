"""The manual's reference pages, generated from the code when the site is built (``docs/hooks.py``).

Each ``<!-- reference: NAME -->`` line of a page under ``docs/reference/`` is replaced by the Markdown that
:data:`SECTIONS` makes for NAME, read from the code itself so the manual cannot drift from it:

- ``settings``: every component config of :data:`crawler.configs.CONFIGS` (each dataclass field's setting, its
  default and the comment written beside it, read with :mod:`tokenize` and :mod:`ast`), then every setting that
  ``crawler/settings.py`` assigns itself, with the comment above or beside it;
- ``commands``: every project command's options (:data:`crawler.cli.COMMANDS`), from the parser each command
  builds, the way ``scrapy.cmdline`` builds it;
- ``record``: the record's fields from ``extraction/record.schema.json`` and one record made by extracting a
  bundled demo page with :func:`extraction.api.extract`;
- ``site-list``: the site-list fields of :data:`crawler.sites.SITE_FIELDS` (the table the validator checks
  entries against) with their defaults from :class:`crawler.sites.SiteConfig`;
- ``stats``: the stats keys the crawl counts, found by an AST scan of the runtime packages for calls that count
  a literal or f-string key (``count(...)``, ``_stat(...)``, ``inc_value(...)``, ...).

Nothing here is imported by the crawl or the commands; the tests (``tests/docs/test_reference.py``) compare
what it writes with the code.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import json
import os
import re
import tokenize
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
RUNTIME_PACKAGES = ("crawler", "pipelines", "extraction", "templates_db")
MARKER = re.compile(r"^<!-- reference: ([a-z-]+) -->$", re.MULTILINE)


# --- source comments ---------------------------------------------------------------------------------------

def _comments(path: Path) -> dict[int, tuple[str, bool]]:
    """Return {line: (comment text, whether the line holds code too)} of a Python file."""
    found: dict[int, tuple[str, bool]] = {}
    code_lines: set[int] = set()
    with path.open("rb") as source:
        for token in tokenize.tokenize(source.readline):
            if token.type == tokenize.COMMENT:
                text = token.string.lstrip("#").strip()
                found[token.start[0]] = (text, False)
            elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                    tokenize.ENCODING, tokenize.ENDMARKER):
                for line in range(token.start[0], token.end[0] + 1):
                    code_lines.add(line)
    return {line: (text, line in code_lines) for line, (text, _) in found.items()}


def _meaning(comments: dict[int, tuple[str, bool]], first: int, last: int) -> str:
    """Return the comment of a statement on lines ``first``-``last``: the block of comment lines right above it
    (section rules ``# ---`` and ``noqa`` markers aside) and any comment at the end of its lines."""
    above: list[str] = []
    line = first - 1
    while line in comments and not comments[line][1]:
        text = comments[line][0]
        if text.startswith("---"):
            break
        above.insert(0, text)
        line -= 1
    beside = [comments[first][0]] if first in comments and comments[first][1] else []
    parts = [" ".join(above)] if above else []
    parts += [text for text in beside if not text.startswith(("noqa", "type:"))]
    return _tidy(" ".join(parts))


def _tidy(text: str) -> str:
    text = re.sub(r"#\s*(noqa|type: ignore)\S*(\s+#)?", "", text)
    # Pointers to the README's old sections, which this manual replaces.
    text = re.sub(r"\s*\((?:see )?README\b[^()]*\)|[;,]?\s*README \"[^\"]*\"", "", text)
    return _cell(re.sub(r"\s+", " ", text).strip())


def _cell(text: str) -> str:
    """Return ``text`` for a table cell: one line, its bars escaped outside code spans (Python-Markdown's tables
    leave a bar inside backticks alone, and would show the backslash of an escaped one there)."""
    parts = re.split(r"(`+[^`]*`+)", text.replace("\n", " "))
    return "".join(part if part.startswith("`") else part.replace("|", "\\|") for part in parts)


def _code(value: str) -> str:
    """Return ``value`` as inline code that holds backticks (and table bars)."""
    fence = "``" if "`" in value else "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def _source_path(obj: Any) -> Path:
    module = importlib.import_module(obj.__module__)
    return Path(module.__file__ or "")


def _relative(path: Path) -> str:
    return path.resolve().relative_to(REPO).as_posix()


# --- settings ---------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Setting:
    """One setting as the reference shows it."""

    name: str
    default: str  # as Python source
    meaning: str
    where: str  # the file (and class) that defines the default


def _default_source(spec: dataclasses.Field[Any]) -> str:
    if spec.default is not dataclasses.MISSING:
        value = spec.default
    elif callable(spec.default_factory):
        value = spec.default_factory()
    else:
        return ""
    return repr(value).replace(str(REPO), "<checkout>")


def _class_field_lines(path: Path, class_name: str) -> dict[str, tuple[int, int]]:
    """Return {field: (first line, last line)} of a class's annotated assignments."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return {statement.target.id: (statement.lineno, statement.end_lineno or statement.lineno)
                    for statement in node.body
                    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)}
    raise LookupError(f"class {class_name} not found in {path}")


def settings_module_assignments() -> list[Setting]:
    """Return every upper-case setting ``crawler/settings.py`` assigns, with its source and comment."""
    path = REPO / "crawler" / "settings.py"
    comments = _comments(path)
    settings = []
    for statement in ast.parse(path.read_text(encoding="utf-8")).body:
        if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id.isupper()):
            name = statement.targets[0].id
            meaning = _meaning(comments, statement.lineno, statement.end_lineno or statement.lineno)
            settings.append(Setting(name, ast.unparse(statement.value), meaning, "crawler/settings.py"))
    return settings


def config_settings() -> list[tuple[type, list[Setting]]]:
    """Return, per component config of ``crawler.configs.CONFIGS``, its settings with default and meaning."""
    from crawler.configs import CONFIGS
    from extraction.config import setting_name

    result = []
    for config in CONFIGS:
        path = _source_path(config)
        lines = _class_field_lines(path, config.__name__)
        comments = _comments(path)
        rows = []
        for spec in dataclasses.fields(config):
            if not spec.init:
                continue
            first, last = lines[spec.name]
            rows.append(Setting(setting_name(config.prefix, spec.name, spec.metadata), _default_source(spec),
                                _meaning(comments, first, last), f"{_relative(path)} ({config.__name__})"))
        result.append((config, rows))
    return result


def _settings_markdown() -> str:
    project = {setting.name: setting for setting in settings_module_assignments()}
    out = []
    for config, rows in config_settings():
        doc = (config.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        out += [f"## {config.__name__}", "",
                f"`{_relative(_source_path(config))}`{': ' + _tidy(doc) if doc else ''}", "",
                "| setting | default | meaning |", "|---|---|---|"]
        for row in rows:
            default = _code(row.default)
            if row.name in project:  # crawler/settings.py sets it: that is the value a command starts with
                default = f"{_code(project[row.name].default)} (`crawler/settings.py`; the class: {default})"
            out.append(f"| `{row.name}` | {default} | {row.meaning} |")
        out.append("")
    covered = {row.name for _, rows in config_settings() for row in rows}
    out += ["## crawler/settings.py", "",
            "The settings the project's settings module sets itself (Scrapy's own among them, where the project "
            "chose another value), as written there; every other Scrapy setting keeps Scrapy's default.", "",
            "| setting | value | meaning |", "|---|---|---|"]
    for setting in project.values():
        if setting.name not in covered:
            out.append(f"| `{setting.name}` | {_code(setting.default)} | {setting.meaning} |")
    return "\n".join(out) + "\n"




# --- commands ---------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Option:
    """One option of a command's parser."""

    flags: tuple[str, ...]  # ("-o", "--output"), or () for a positional argument
    metavar: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class CommandDoc:
    """A project command as its ``--help`` knows it."""

    name: str
    usage: str
    short: str
    description: str
    options: tuple[Option, ...]  # the command's own
    global_options: tuple[Option, ...]  # Scrapy's, shared by every command


def command_parser(name: str) -> tuple[Any, argparse.ArgumentParser]:
    """Return a project command and the parser it builds, made as ``scrapy.cmdline.execute`` makes them."""
    os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "crawler.settings")
    from scrapy.commands import ScrapyHelpFormatter
    from scrapy.utils.project import get_project_settings

    try:
        from scrapy.cmdline import ScrapyArgumentParser as Parser
    except ImportError:  # an older Scrapy
        Parser = argparse.ArgumentParser  # type: ignore[misc,assignment]
    command = importlib.import_module(f"crawler.commands.{name}").Command()
    settings = get_project_settings()
    parser = Parser(formatter_class=ScrapyHelpFormatter, usage=f"newscorpus {name} {command.syntax()}",
                    conflict_handler="resolve", description=command.long_desc())
    settings.setdict(command.default_settings, priority="command")
    command.settings = settings
    command.add_options(parser)
    return command, parser


def _options(actions: list[argparse.Action]) -> tuple[Option, ...]:
    found = []
    for action in actions:
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        metavar = action.metavar if isinstance(action.metavar, str) else ""
        if not metavar and action.nargs != 0 and not isinstance(action, argparse._StoreConstAction):
            metavar = action.dest.upper()
        default = None if action.default in (None, argparse.SUPPRESS) else action.default
        if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction | argparse._StoreConstAction):
            default = None  # a switch
        found.append(Option(tuple(action.option_strings), metavar, default, action.help or "",
                            tuple(str(choice) for choice in action.choices or ())))
    return tuple(found)


def commands() -> list[CommandDoc]:
    """Return every project command (``crawler.cli.COMMANDS``) with the options of its parser."""
    from crawler.cli import COMMANDS

    docs = []
    for name in COMMANDS:
        command, parser = command_parser(name)
        own: list[argparse.Action] = []
        shared: list[argparse.Action] = []
        for group in parser._action_groups:
            (shared if group.title == "Global Options" else own).extend(group._group_actions)
        docs.append(CommandDoc(name, parser.usage or "", command.short_desc(), command.long_desc() or "",
                               _options(own), _options(shared)))
    return docs


def _option_row(option: Option) -> str:
    flags = ", ".join(f"`{flag}`" for flag in option.flags) if option.flags else f"`{option.metavar}`"
    argument = f"`{option.metavar}`" if option.flags and option.metavar else ""
    if option.choices:
        argument = ", ".join(f"`{choice}`" for choice in option.choices)
    default = "" if option.default in (None, [], "") else _code(str(option.default))
    return f"| {flags} | {argument} | {default} | {_cell(option.help)} |"


def _commands_markdown() -> str:
    from crawler.cli import HelpFormatter
    from crawler.spiders.news_sites import NewsSitesSpider

    docs = commands()
    out = ["Every command runs as `newscorpus COMMAND` from any directory, or `scrapy COMMAND` in the checkout; "
           "`newscorpus COMMAND --help` prints the same.", ""]
    out += [f"- [`{doc.name}`](#{doc.name}): {doc.short}" for doc in docs] + [""]
    for doc in docs:
        out += [f"## {doc.name}", "", f"```text\n{doc.usage}\n```", "", doc.short + ".", ""]
        if doc.description and doc.description != doc.short:
            # As --help shows it: paragraphs filled, indented lines (lists, examples) as written.
            text = HelpFormatter(f"newscorpus {doc.name}")._fill_text(doc.description, 110, "")
            out += ["```text", text, "```", ""]
        if doc.name == "crawl":
            out += ["Arguments of the `news_sites` spider (`-a NAME=VALUE`):", "",
                    "| argument | value | meaning |", "|---|---|---|"]
            out += [f"| `{name}` | `{value}` | {_cell(meaning)} |"
                    for name, (value, meaning) in NewsSitesSpider.arguments.items()]
            out.append("")
        out += ["| option | argument | default | meaning |", "|---|---|---|---|"]
        out += [_option_row(option) for option in doc.options] + [""]
    out += ["## Options of every command", "",
            "Scrapy's global options, which every command above takes as well:", "",
            "| option | argument | default | meaning |", "|---|---|---|---|"]
    out += [_option_row(option) for option in docs[0].global_options]
    return "\n".join(out) + "\n"


# --- the record -------------------------------------------------------------------------------------------

def record_schema() -> dict[str, Any]:
    """Return ``extraction/record.schema.json``."""
    return json.loads((REPO / "extraction" / "record.schema.json").read_text(encoding="utf-8"))


def _type(spec: dict[str, Any]) -> str:
    kinds = spec.get("type", "")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "enum" in spec:
        return ", ".join(f"`{json.dumps(value)}`" for value in spec["enum"])
    return ", ".join(str(kind) for kind in kinds if kind)


def example_record() -> tuple[str, dict[str, Any]]:
    """Return (URL, record) of a bundled demo article extracted by :func:`extraction.api.extract`: the shortest
    English article of the demo's classic layout, at the address the demo server gives it."""
    from demo import build_sites
    from extraction.api import extract

    english = next(site for site in build_sites() if site.lang == "en")
    page = min((page for page in english.articles if page.layout == "classic"), key=lambda page: len(page.html))
    url = "http://127.0.0.1:8000" + page.path
    return url, extract(page.body_bytes, url)


def _record_markdown() -> str:
    schema = record_schema()
    required = set(schema.get("required", ()))
    out = [_tidy(schema.get("description", "")), "",
           "| field | type | meaning |", "|---|---|---|"]
    for name, spec in schema["properties"].items():
        always = "" if name in required else " (optional)"
        out.append(f"| `{name}` | {_type(spec)}{always} | {_cell(spec.get('description', ''))} |")
    url, record = example_record()
    out += ["", "## An example record", "",
            f"The record of the demo's English article `{url}` (`make demo` serves it; its port changes with each "
            "run), made when this page was built by the code it describes:", "",
            "```python", "from extraction.api import extract", "",
            "record = extract(html_bytes, url)", "```", "",
            "```json", json.dumps(record, ensure_ascii=False, indent=2), "```"]
    return "\n".join(out) + "\n"


# --- the site list ----------------------------------------------------------------------------------------

def _site_markdown() -> str:
    from crawler.sites import SITE_FIELDS, TOP_LEVEL_KEYS, SiteConfig

    defaults = {spec.name: spec.default for spec in dataclasses.fields(SiteConfig)
                if spec.default is not dataclasses.MISSING}
    out = ["| key | meaning |", "|---|---|"]
    out += [f"| `{key}` | {_cell(meaning)} |" for key, meaning in TOP_LEVEL_KEYS.items()]
    out += ["", "A site entry's fields (anything else is refused with the list of these):", "",
            "| field | default | meaning |", "|---|---|---|"]
    for name, meaning in SITE_FIELDS.items():
        default = defaults.get(name, dataclasses.MISSING)
        shown = "" if default is dataclasses.MISSING else ("none" if default in (None, ()) else _code(str(default)))
        out.append(f"| `{name}` | {shown} | {_cell(meaning)} |")
    return "\n".join(out) + "\n"


# --- stats ------------------------------------------------------------------------------------------------

_COUNTERS = frozenset({"count", "_count", "_stat", "inc_value", "set_value", "max_value", "min_value", "counter"})


def _placeholder(node: ast.expr) -> str:
    if isinstance(node, ast.IfExp) and isinstance(node.body, ast.Constant) and isinstance(node.orelse, ast.Constant):
        return "|".join(str(branch.value) for branch in (node.body, node.orelse))
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ast.unparse(node)


def _keys(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                parts.append(f"<{_placeholder(value.value)}>")
        yield "".join(parts)
    elif isinstance(node, ast.IfExp):
        yield from _keys(node.body)
        yield from _keys(node.orelse)


def stats_keys() -> dict[str, set[str]]:
    """Return {stats key: the modules that count it} for the runtime packages: every call of a counting
    function (``count``, ``_stat``, ``inc_value``, ...) whose first argument is a literal or f-string key with a
    ``/`` (``<name>`` stands for what an f-string fills in)."""
    found: dict[str, set[str]] = {}
    for package in RUNTIME_PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Call) or not node.args:
                    continue
                function = node.func
                name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
                if name not in _COUNTERS:
                    continue
                for key in _keys(node.args[0]):
                    if re.fullmatch(r"[a-z_]+(/[\w<>|.-]+)+", key):
                        found.setdefault(key, set()).add(_relative(path))
    return found


def _stats_markdown() -> str:
    keys = stats_keys()
    out: list[str] = []
    for component in sorted({key.split("/")[0] for key in keys}):
        out += [f"## {component}", "", "| key | counted in |", "|---|---|"]
        for key in sorted(key for key in keys if key.split("/")[0] == component):
            out.append(f"| `{key}` | {', '.join(f'`{m}`' for m in sorted(keys[key]))} |")
        out.append("")
    return "\n".join(out)


SECTIONS: dict[str, Callable[[], str]] = {
    "settings": _settings_markdown,
    "commands": _commands_markdown,
    "record": _record_markdown,
    "site-list": _site_markdown,
    "stats": _stats_markdown,
}


def fill(markdown: str) -> str:
    """Return a page's Markdown with each ``<!-- reference: NAME -->`` line replaced by its generated section;
    KeyError for a name :data:`SECTIONS` does not know."""
    return MARKER.sub(lambda match: SECTIONS[match.group(1)](), markdown)
