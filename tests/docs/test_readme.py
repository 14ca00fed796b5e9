"""Every command the README shows is run by a test (named below) or by `make demo`, and is one the code takes.

The README's commands are read from its code blocks (sh, cron) and from its inline code that starts like a command
(`make ...`, `newscorpus ...`, `python -m ...`). Each must match an entry of :data:`RUN_BY`, which names the test
that runs it for real and a string that test's source holds (so an entry cannot point at a test that does
something else); a new README command with no entry fails here. Each is also checked here, cheaply and without
running it: a project command's options are parsed by the command's own parser and option check (an unknown
option, a bad ``-s`` value, a spider argument the spider does not take: the same error the user would get), every
``-s NAME`` is a setting the project or Scrapy has, a ``make`` target exists, a ``python -m`` module is found. The
README's site list loads with the site-list validator and its example record validates against the record's
schema.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import itertools
import json
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import jsonschema
import pytest
from scrapy.settings import default_settings

from crawler.cli import COMMANDS
from crawler.sites import parse_site_list
from crawler.spiders.news_sites import NewsSitesSpider

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")

# (the command's pattern, the test that runs it, a string that test's source holds). A pattern matches the whole
# command, `.venv/bin/` and the shell's quotes left out; the first entry that matches is the command's.
RUN_BY: list[tuple[str, str, str]] = [
    # The demo target's recipe is `scrapy crawl news_sites` (checked below), which this test runs twice (its
    # crawl(): the module's `scrapy crawl news_sites`, plain HTTP; tests/crawler/test_crawl_demo.py renders).
    (r"make demo", "tests/crawler/test_reruns.py::test_a_second_demo_crawl_gets_its_whole_corpus",
     "done = crawl(tmp_path)"),
    (r"make test", ".ci/run", "make test"),  # CI runs the suite this way
    (r"make docs", "tests/docs/test_site.py::test_the_manual_builds_strict_and_reads_nothing_from_outside",
     "MKDOCS"),
    (r"newscorpus corpus output/ -o articles\.jsonl",
     "tests/crawler/test_reruns.py::test_a_second_demo_crawl_gets_its_whole_corpus", "Kept 80 of 100 records"),
    (r"newscorpus crawl news_sites -a sites=my-sites\.yaml -o corpus/%\(time\)s\.jsonl",
     "tests/crawler/test_reruns.py::test_a_users_crawl_of_the_demo_pages_run_twice_keeps_everything",
     '"corpus/%(time)s.jsonl"'),
    (r"newscorpus corpus corpus/ -o articles\.jsonl",
     "tests/crawler/test_reruns.py::test_a_users_crawl_of_the_demo_pages_run_twice_keeps_everything",
     '"articles.jsonl"'),
    (r"newscorpus extract page\.html --url \S+",
     "tests/crawler/test_crawl_demo.py::test_extract_of_an_archived_page_gives_the_crawl_record", '"--url"'),
    (r"newscorpus extract -u \S+",
     "tests/crawler/commands/test_extract.py::test_urls_are_fetched_as_the_crawl_fetches_them", '"-u"'),
    (r"newscorpus report corpus/\S+\.jsonl",
     "tests/crawler/commands/test_report.py::test_scrapy_report_makes_the_same_report_from_the_outputs", '"report"'),
    (r"newscorpus state list --sites my-sites\.yaml", "tests/crawler/commands/test_state.py::test_list_show_forget",
     '"list"'),
    (r"newscorpus state copy --to postgresql://\S+",
     "tests/crawler/commands/test_state.py::test_copy_moves_a_one_machine_state_and_templates_into_postgresql",
     '"copy"'),
    (r"newscorpus crawl news_sites -a sites=sites\.yaml -o out/%\(worker\)s-%\(time\)s\.jsonl "
     r"-s CRAWL_STATE_STORE=postgresql://\S+ -s TEMPLATES_STORE=postgresql://\S+",
     "tests/crawler/test_crawl_workers.py::_start", '"%(worker)s-{run}.jsonl"'),  # every test there starts workers so
    (r"newscorpus corpus out/ -o corpus\.jsonl",
     "tests/crawler/test_crawl_workers.py::test_three_workers_one_killed_three_times_crawl_every_page_once",
     '"corpus"'),
    (r"python -m templates_db\.pgcluster",
     "tests/docs/test_readme.py::test_the_throwaway_postgresql_server_starts_and_stops", '"templates_db.pgcluster"'),
    # The headline table's command: the same command on a dataset (the peers' own environments are not in CI).
    (r"newscorpus evaluate --dataset SET --split held-out --method pipeline --baselines trafilatura,news-please "
     r"--out-dir bench/results/newsplease", "tests/evaluation/test_harness.py::test_cli_on_cleaneval", '"--dataset"'),
    (r"newscorpus COMMAND --help", "tests/crawler/test_cli.py::test_crawl_help_lists_the_spider_arguments",
     '"--help"'),
]

# Inline code that is a command, as opposed to an option or a file name.
INLINE = re.compile(r"`((?:\.venv/bin/)?(?:make|newscorpus|scrapy|python) [^`]+)`")


@functools.cache
def _load_reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reference", REPO / "docs" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("reference", module)
    spec.loader.exec_module(module)
    return module


def blocks(language: str) -> list[str]:
    """Return the README's fenced code blocks of a language."""
    return re.findall(rf"^```{language}\n(.*?)^```$", README, flags=re.MULTILINE | re.DOTALL)


def readme_commands() -> list[str]:
    """Return every command of the README, continuation lines joined, comments and `.venv/bin/` left out."""
    found = []
    for block in blocks("sh"):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                found.append(line)
    for block in blocks("cron"):
        for line in block.splitlines():
            if line.strip() and not line.startswith("#"):
                # m h dom mon dow, then `cd DIR && flock -n LOCK COMMAND`; cron's `\%` is `%`.
                command = line.split(None, 5)[5].replace("\\%", "%")
                command = re.sub(r"^cd \S+ && ", "", command)
                found.append(re.sub(r"^flock -n \S+ ", "", command))
    found += INLINE.findall(README)
    return [re.sub(r"\s+", " ", command.replace(".venv/bin/", "")) for command in found]


def _unquoted(command: str) -> str:
    return " ".join(shlex.split(command))


def _run_by(command: str) -> tuple[str, str, str] | None:
    return next((entry for entry in RUN_BY if re.fullmatch(entry[0], _unquoted(command))), None)


def test_the_readme_is_a_front_door() -> None:
    lines = README.splitlines()
    assert len(lines) < 250
    prose = re.sub(r"^```.*?^```$", "", README, flags=re.MULTILINE | re.DOTALL)
    assert not re.search(r"\bissues? #?\d+", prose, flags=re.IGNORECASE)  # no issue numbers
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", prose)  # no dated notes (dates belong in docs/history/)
    assert len(readme_commands()) >= 10  # the parser found the commands


def test_every_readme_command_is_run_by_a_named_test() -> None:
    commands = readme_commands()
    untested = [command for command in commands if _run_by(command) is None]
    assert not untested, f"README commands no test runs (add each to RUN_BY with its test): {untested}"
    for pattern, test, witness in RUN_BY:
        assert any(re.fullmatch(pattern, _unquoted(command)) for command in commands), \
            f"RUN_BY names no README command: {pattern}"
        path, _, name = test.partition("::")
        source = (REPO / path).read_text(encoding="utf-8")
        if name:
            tree = ast.parse(source)
            (function,) = [node for node in ast.walk(tree)
                           if isinstance(node, ast.FunctionDef) and node.name == name] or [None]
            assert function is not None, f"{test} does not exist"
            source = ast.get_source_segment(source, function) or ""
        assert witness in source, f"{test} does not hold {witness!r}: does it still run {pattern}?"


def test_make_demo_runs_the_crawl_its_test_runs() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo: .*\n\t\$\(BIN\)/scrapy crawl news_sites\n", makefile, flags=re.MULTILINE)


@pytest.mark.parametrize("command", sorted(set(readme_commands())))
def test_each_readme_command_is_one_the_code_takes(command: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # nothing a check might write lands in the checkout
    words = shlex.split(command)
    if words[0] == "make":
        makefile = (REPO / "Makefile").read_text(encoding="utf-8")
        assert re.search(rf"^{re.escape(words[1])}:", makefile, flags=re.MULTILINE), command
        return
    if words[0] == "python":
        assert words[1] == "-m" and importlib.util.find_spec(words[2]) is not None, command
        return
    assert words[0] in ("newscorpus", "scrapy"), command
    name, arguments = words[1], words[2:]
    if name == "COMMAND":  # `newscorpus COMMAND --help`: every command's
        assert arguments == ["--help"]
        return
    assert name in COMMANDS, command
    reference = _load_reference()
    project_command, parser = reference.command_parser(name)
    options, rest = parser.parse_known_args(arguments)
    project_command.process_options(rest, options)  # the command's own checks: unknown options, -s values
    for setting in [value.split("=", 1)[0] for flag, value in itertools.pairwise(arguments) if flag == "-s"]:
        known = {setting.name for _, settings in reference.config_settings() for setting in settings}
        known |= {setting.name for setting in reference.settings_module_assignments()}
        assert setting in known or hasattr(default_settings, setting), f"{command}: no setting {setting}"
    if name == "crawl":
        assert rest[:1] == ["news_sites"], command
        NewsSitesSpider.check_arguments(options.spargs)  # a dict once process_options has read -a


def test_the_readme_site_list_loads() -> None:
    (site_list,) = blocks("yaml")
    assert len(site_list.strip().splitlines()) == 5
    (site,) = parse_site_list(site_list, source="README.md").sites
    assert site.name == "my-paper" and site.sitemaps


def test_the_readme_record_is_a_record() -> None:
    (record,) = blocks("json")
    schema = json.loads((REPO / "extraction" / "record.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(json.loads(record), schema)
    assert set(json.loads(record)) == set(schema["properties"])  # every field, none made up


def test_the_throwaway_postgresql_server_starts_and_stops(tmp_path: Path) -> None:
    """`python -m templates_db.pgcluster` (the README's way to try several workers on one machine) prints a URI
    one can connect to, and Ctrl-C stops the server and deletes its folder."""
    import psycopg

    from templates_db.pgcluster import server_programs

    if server_programs() is None:
        pytest.skip("PostgreSQL is not installed: `make test` installs Debian's postgresql")
    server = subprocess.Popen([sys.executable, "-m", "templates_db.pgcluster"], cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        found = re.search(r" at (postgresql://\S+) \(pid \d+\); Ctrl-C stops it and deletes (\S+)$", line.strip())
        assert found, (line, server.stderr.read() if server.poll() is not None and server.stderr else "")
        with psycopg.connect(found.group(1)) as connection:
            assert connection.execute("SELECT 1").fetchone() == (1,)
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=60) == 0
        assert not Path(found.group(2)).exists()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_the_readme_links_resolve() -> None:
    """Every link of the README names a file of the checkout, or one of its own headings (GitHub's anchors)."""
    headings = {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
                for heading in re.findall(r"^#+ (.+)$", README, flags=re.MULTILINE)}
    links = re.findall(r"\]\(([^)\s]+)\)", README)
    assert links
    for link in links:
        if link.startswith("#"):
            assert link[1:] in headings, link
        else:
            assert not re.match(r"[a-z]+:", link) and (REPO / link.split("#")[0]).exists(), link
