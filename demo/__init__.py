"""Bundled demo news sites (English "Harbor Gazette", Chinese "江城日报") and their local server.

``build_sites()`` returns the generated pages with their gold text;
``DemoServer`` serves them plus robots.txt, sitemaps, feeds and the /bad/
robustness endpoints on 127.0.0.1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from demo.badpages import BAD_CASES, BadCase
from demo.content import DemoPage, DemoSite, build_sites

if TYPE_CHECKING:
    from demo.server import DemoServer

__all__ = ["BAD_CASES", "BadCase", "DemoPage", "DemoServer", "DemoSite", "build_sites"]


def __getattr__(name: str) -> Any:
    """Return ``DemoServer`` lazily (importing demo.server here would upset ``python -m demo.server``)."""
    if name == "DemoServer":
        from demo.server import DemoServer

        return DemoServer
    raise AttributeError(f"module 'demo' has no attribute {name!r}")
