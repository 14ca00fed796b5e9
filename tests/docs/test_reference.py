"""The manual's generated reference (docs/reference.py) against the code: every setting, command option, record
field, site-list field and stats key the code has is in it, and it names nothing the code does not have."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import jsonschema
import pytest

from crawler import settings as project_settings
from crawler.cli import COMMANDS
from crawler.configs import CONFIGS
from crawler.sites import SITE_FIELDS, SiteConfig, SiteListError, parse_site_list
from crawler.spiders.news_sites import NewsSitesSpider
from extraction.record import EXPORT_FIELDS, Record

REPO = Path(__file__).resolve().parents[2]


def _load_reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reference", REPO / "docs" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["reference"] = module
    spec.loader.exec_module(module)
    return module


reference = _load_reference()


def _rows(markdown: str) -> list[list[str]]:
    """Return the cells of every table row of a generated section (header and rule lines aside)."""
    rows = []
    for line in markdown.splitlines():
        if line.startswith("| ") and not line.startswith(("| setting |", "| option |", "| field |", "| key |",
                                                          "| argument |")):
            cells = re.split(r"(?<!\\)\|(?=(?:[^`]*`[^`]*`)*[^`]*$)", line.strip())[1:-1]
            rows.append([cell.strip() for cell in cells])
    return rows


def _names(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def _sections(markdown: str) -> dict[str, str]:
    """Return {heading: text} of a generated page's ``## `` sections."""
    parts = re.split(r"^## (.+)$", markdown, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


@pytest.fixture(scope="module")
def settings_page() -> str:
    return reference.SECTIONS["settings"]()


def test_every_setting_is_in_the_reference_with_a_meaning(settings_page: str) -> None:
    documented = {_names(row[0])[0]: row for row in _rows(settings_page)}
    in_configs = {name for config in CONFIGS for name in config.setting_names().values()}
    tree = ast.parse((REPO / "crawler" / "settings.py").read_text(encoding="utf-8"))
    imported = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom | ast.Import)
                for alias in node.names}
    in_module = {name for name in vars(project_settings) if name.isupper() and name not in imported}
    assert set(documented) == in_configs | in_module
    undocumented = sorted(name for name, row in documented.items() if not row[2])
    assert not undocumented, f"settings without a comment in the code, so without a meaning: {undocumented}"


def test_a_setting_default_is_the_one_the_code_uses(settings_page: str) -> None:
    documented = {_names(row[0])[0]: row[1] for row in _rows(settings_page)}
    assert documented["BLOCKS_FAVOR"] == "`'balanced'`"
    assert documented["DEDUP_THRESHOLD"] == "`0.85`"
    # crawler/settings.py's value wins over the dataclass's, and the page says so.
    assert documented["DOWNLOAD_MAXSIZE"].startswith("`8 * 1024 * 1024` (`crawler/settings.py`")
    assert "<checkout>" in documented["TEMPLATES_STORE"]


@pytest.fixture(scope="module")
def commands_page() -> str:
    return reference.SECTIONS["commands"]()


def test_every_command_option_is_in_the_reference(commands_page: str) -> None:
    sections = _sections(commands_page)
    shared = {flag for row in _rows(sections["Options of every command"]) for flag in _names(row[0])}
    assert {"-s", "--set", "-L", "--loglevel"} <= shared
    for name in COMMANDS:
        _, parser = reference.command_parser(name)
        in_parser = set(parser._option_string_actions) - {"-h", "--help"}
        own = {flag for row in _rows(sections[name]) for flag in _names(row[0]) if flag.startswith("-")}
        assert own | shared == in_parser, name
        assert not own & shared, name
    crawl_arguments = {_names(row[0])[0] for row in _rows(sections["crawl"]) if not _names(row[0])[0].startswith("-")}
    assert set(NewsSitesSpider.arguments) <= crawl_arguments


def test_every_record_field_is_in_the_reference_and_the_example_is_a_real_record() -> None:
    page = reference.SECTIONS["record"]()
    schema = reference.record_schema()
    table, example = page.split("## An example record")
    documented = [_names(row[0])[0] for row in _rows(table)]
    dataclass_fields = [name for name in Record.__dataclass_fields__ if name in EXPORT_FIELDS]
    assert documented == list(schema["properties"]) == EXPORT_FIELDS == dataclass_fields
    assert all(row[2] for row in _rows(table)), "a record field without a description in the schema"
    record = json.loads(example.split("```json\n", 1)[1].split("\n```", 1)[0])
    jsonschema.validate(record, schema)
    assert list(record) == EXPORT_FIELDS
    assert record["page_type"] == "article" and record["error"] is None and len(record["text"]) > 200


def test_the_site_list_reference_is_the_validator_table() -> None:
    page = reference.SECTIONS["site-list"]()
    fields_section = page.split("A site entry's fields", 1)[1]
    assert [_names(row[0])[0] for row in _rows(fields_section)] == list(SITE_FIELDS)
    assert set(SITE_FIELDS) == set(SiteConfig.__dataclass_fields__)
    site = "sites:\n  - name: a\n    start_urls: [http://a.example/]\n    allowed_prefixes: [http://a.example/]\n"
    parse_site_list(site)
    with pytest.raises(SiteListError, match=r"field 'revisted': unknown field \(known: allowed_prefixes, "):
        parse_site_list(site + "    revisted: 6h\n")


def test_the_stats_scan_finds_the_keys_the_code_counts() -> None:
    keys = reference.stats_keys()
    for key in ("crawl/page", "crawl/skipped/max_pages/<name>", "render/javascript/<on|off>", "dedup/exact",
                "dedup/near", "blocks/<name>", "metadata/<name>/<source>", "state/recovered_exports",
                "templates/store_unusable", "export/skipped/<reason>"):
        assert key in keys, key
    assert "crawl/page" in reference.SECTIONS["stats"]()
    # Counting calls that are no stats (text.count("-")) are not taken for keys.
    assert not [key for key in keys if "/" not in key or " " in key]
