"""The manual builds as `make docs` builds it, with every warning an error, and its checks catch what they are
for: a link to a missing page or anchor, a page left out of the nav, a malformed external link."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MKDOCS = [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean"]  # the Makefile's `docs` command

pytestmark = pytest.mark.skipif(shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None,
                                reason="mkdocs is not installed (make setup installs it: requirements-docs.txt)")


def test_the_manual_builds_strict_and_reads_nothing_from_outside(tmp_path: Path) -> None:
    site = tmp_path / "site"
    build = subprocess.run([*MKDOCS, "--site-dir", str(site)], cwd=REPO, capture_output=True, text=True,
                           timeout=300)
    assert build.returncode == 0, build.stderr[-3000:]
    assert "WARNING" not in build.stderr
    pages = {path.relative_to(site).as_posix(): path.read_text(encoding="utf-8") for path in site.rglob("*.html")}
    # The generated reference is there, filled from the code.
    assert "BLOCKS_FAVOR" in pages["reference/settings.html"]
    assert "--duplicates" in pages["reference/commands.html"]
    assert "duplicate_of" in pages["reference/record.html"] and "&quot;schema_version&quot;" in \
        pages["reference/record.html"]
    assert "allowed_prefixes" in pages["reference/site-list.html"]
    assert "crawl/page" in pages["reference/stats.html"]
    assert "<!-- reference:" not in "".join(pages.values())
    # Readable offline: no script, stylesheet or image from another host.
    outside = [(name, found) for name, html in pages.items()
               for found in re.findall(r'<(?:script|link|img)\b[^>]*(?:src|href)="(?:https?:)?//[^"]+"', html)]
    assert not outside


def _tiny_site(tmp_path: Path, page: str, left_out: str = "") -> subprocess.CompletedProcess[str]:
    """Build a two-page site with the manual's configuration and hooks; ``left_out``: a page not in the nav."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n## Here\n", encoding="utf-8")
    (tmp_path / "docs" / "page.md").write_text(page, encoding="utf-8")
    if left_out:
        (tmp_path / "docs" / "extra.md").write_text(left_out, encoding="utf-8")
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:\n")[0]
    config = config.replace("docs/hooks.py", str(REPO / "docs" / "hooks.py")).replace("site_dir: build/docs",
                                                                                      "site_dir: site")
    (tmp_path / "mkdocs.yml").write_text(config + "\nnav:\n  - index.md\n  - page.md\n", encoding="utf-8")
    return subprocess.run(MKDOCS, cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_a_good_tiny_site_builds(tmp_path: Path) -> None:
    build = _tiny_site(tmp_path, "# Page\n\n[home](index.md#here), <https://example.org/a?b=1>\n")
    assert build.returncode == 0, build.stderr


def test_the_checks_fail_the_build(tmp_path: Path) -> None:
    page = ("# Page\n\n[home](index.md#nowhere), [gone](missing.md), [site](https://exa mple), <http://nohost>\n\n"
            "<!-- reference: nothing -->\n")
    build = _tiny_site(tmp_path, page, left_out="# Extra\n")
    assert build.returncode != 0
    for message in ("'#nowhere'", "'missing.md'", "malformed external link 'https://exa'",
                    "malformed external link 'http://nohost'", "extra.md", "no generated reference section"):
        assert message in build.stderr, (message, build.stderr)
