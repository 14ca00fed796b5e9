"""The compiled part of the checkout: the page table (``extraction/dom/pagetable.pyx``), Cython over lxml's C API.

Everything else about the package is in pyproject.toml; this file only declares the extension, whose include
folders come from the lxml wheel that builds it (``lxml.get_include()``: lxml's .pxd files and libxml2's headers).
The build pins Cython and lxml in pyproject.toml's [build-system]; lxml there is the one requirements.txt pins, so
the struct layout compiled against is the one the crawl runs with.

``NEWSCORPUS_CHECKED_BUILD=1`` builds with Cython's bounds and None checks on (the tests' bounds-checked build:
an out-of-range index raises IndexError instead of reading past an array).
"""

from __future__ import annotations

import os

import lxml
from Cython.Build import cythonize
from setuptools import Extension, setup

CHECKED = os.environ.get("NEWSCORPUS_CHECKED_BUILD") == "1"

extension = Extension("extraction.dom.pagetable", ["extraction/dom/pagetable.pyx"], include_dirs=lxml.get_include())
directives = {"boundscheck": True, "wraparound": True, "initializedcheck": True, "nonecheck": True} if CHECKED else {}
# force: the C file is written again on every build, so that it follows NEWSCORPUS_CHECKED_BUILD (cythonize would
# otherwise keep a C file newer than the .pyx, written with the other directives).
setup(ext_modules=cythonize([extension], compiler_directives=directives, include_path=lxml.get_include(), force=True))
