# README command 1: `make demo`   (install everything, crawl the bundled demo sites)
# README command 2: `make test`   (install everything, run the test suite)
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SYSTEM_PACKAGES := chromium chromium-headless-shell fonts-noto-cjk
# The tests' PostgreSQL server (templates_db/pgcluster.py starts a throwaway one; the system's cluster is never used).
TEST_SYSTEM_PACKAGES := postgresql
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PYTEST_ARGS ?=

.PHONY: setup system-packages test-system-packages python-packages extras newsplease fundus demo test lint docs bench bench-distributed bench-replay bench-templates train-blocks train-stack train-title render-pagetype train-pagetype bench-pagetype train-gate bench-corpus train-web2text bench-web2text bench-lists clean

setup: system-packages python-packages

# Debian's Chromium (never Playwright's own browser download, which fails here) and CJK fonts,
# without which Chinese pages render as empty boxes; a C compiler and the headers of $(PYTHON) when the machine
# lacks them (the page table, extraction/dom/pagetable.pyx, is compiled by the install below).
BUILD_PACKAGES := gcc libc6-dev python3-dev
system-packages:
	@if ! dpkg -s $(SYSTEM_PACKAGES) >/dev/null 2>&1; then \
	  echo "Installing $(SYSTEM_PACKAGES) with apt-get"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(SYSTEM_PACKAGES); \
	fi
	@if ! command -v gcc >/dev/null 2>&1 || ! $(PYTHON) -c "import os, sysconfig, sys; \
	    sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))"; then \
	  echo "Installing $(BUILD_PACKAGES) with apt-get (a C compiler and Python's headers)"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(BUILD_PACKAGES); \
	fi

# Debian's PostgreSQL server for the tests of the stores' second backend and of site leases (`make test` only).
test-system-packages:
	@if ! dpkg -s $(TEST_SYSTEM_PACKAGES) >/dev/null 2>&1; then \
	  echo "Installing $(TEST_SYSTEM_PACKAGES) with apt-get"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(TEST_SYSTEM_PACKAGES); \
	fi

python-packages: $(VENV)/.installed

# The checkout itself is installed in editable mode (pyproject.toml): the `newscorpus` command, from any directory.
# The install compiles the page table (setup.py); a change to its source installs again, which rebuilds it.
$(VENV)/.installed: requirements.txt requirements-dev.txt requirements-docs.txt pyproject.toml setup.py extraction/dom/pagetable.pyx
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check pip==26.3
	$(BIN)/pip install -q --disable-pip-version-check -r requirements-dev.txt
	$(BIN)/pip install -q --disable-pip-version-check --no-deps -e .
	touch $@

# Training and benchmark extras (torch CPU wheel, onnx, skl2onnx, baseline extractors).
extras: setup
	$(BIN)/pip install -q --disable-pip-version-check -r requirements-extras.txt

# The peers the benchmarks measure beside ours, news-please and Fundus, each in its own environment
# (.venv-<peer> from requirements-<peer>.txt): their pins clash with ours (python-dateutil below 3, lxml below 6).
newsplease: .venv-newsplease/.installed
fundus: .venv-fundus/.installed

.venv-%/.installed: requirements-%.txt
	test -x .venv-$*/bin/python || $(PYTHON) -m venv .venv-$*
	.venv-$*/bin/pip install -q --disable-pip-version-check pip==26.3
	.venv-$*/bin/pip install -q --disable-pip-version-check -r $<
	touch $@

# Crawl the bundled demo sites (served on 127.0.0.1 by `scrapy crawl` itself, crawler/commands/crawl.py) into
# output/news_sites-<time>.jsonl, with screenshots and HTML under output/.
demo: setup
	$(BIN)/scrapy crawl news_sites

test: setup test-system-packages
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

# The manual (mkdocs.yml, docs/): built into build/docs/ with every warning an error (a broken link or anchor, a
# page left out of the nav, a malformed external link); its reference pages are generated from the code
# (docs/reference.py). Open build/docs/index.html. The test suite builds it too (tests/docs/test_site.py).
docs: setup
	$(BIN)/mkdocs build --strict --clean

# Crawl benchmark: rendered vs plain HTTP on the demo sites, side by side.
bench: setup
	$(BIN)/python -m bench.crawl_bench

# Several workers on one PostgreSQL crawl state beside one worker on SQLite, plain and rendered (~15 min):
# pages/s, crawl-state ms and database round trips a page (bench/results/distributed.md).
bench-distributed: setup test-system-packages
	$(BIN)/python -m bench.distributed_bench

# Replay benchmark (needs ../shared/datasets): real dataset pages crawled at their original URLs through a
# local proxy with the default settings, plain (5,000 pages, ~6 min) and rendered (2,000 pages, ~15 min):
# pages/s, memory over time, screenshot bytes, crawl F1 beside offline F1 (bench/results/replay-*/replay.md).
bench-replay: setup
	$(BIN)/python -m bench.replay_bench --pages 5000 --render off --out bench/results/replay-plain
	$(BIN)/python -m bench.replay_bench --pages 2000 --render on --out bench/results/replay-rendered

# Template library benchmarks (need ../shared/datasets/msv-big5): quality and cost per page.
bench-templates: setup
	$(BIN)/python -m bench.templates_msv
	$(BIN)/python -m bench.templates_bench

# Block and paragraph SVMs (need ../shared/datasets): writes models/blocks.onnx, models/paragraphs.onnx,
# models/meta.json and models/training/ablation.md (~30 min on 2 cores; features cached in ~/.cache/newscorpus).
train-blocks: setup
	$(BIN)/python -m models.training.train_blocks

# The default block model (gradient-boosted trees over blocks in context, fed by the page-type model):
# models/stack/ (~5 min on 2 cores the first time, features cached in ~/.cache/newscorpus; then ~2 min).
# Run after train-blocks and train-pagetype: it reads their features and probabilities. Compare its held-out
# text with the shipped models' before shipping (models/training/README.md: a retrained stack lost text).
train-stack: setup
	$(BIN)/python -m models.training.train_stack

# The title chooser (extraction/title.py, models/title/; needs ../shared/datasets), under a minute:
train-title: setup
	$(BIN)/python -m models.training.train_title

# Page-type models (paper 000; need ../shared/datasets and `make extras` for torch):
# render the labelled pages into the screenshot cache ($$PAGETYPE_CACHE, default
# ~/.cache/news-crawler/pagetype; ~10 min), train the DOM/URL model and the CNNs (~40 min on 2 cores),
# then fit the fusion and score everything on held-out sites (bench/results/pagetype.md).
render-pagetype: setup
	$(BIN)/python -m models.training.pagetype_data render

train-pagetype: extras render-pagetype
	$(BIN)/python -m models.training.train_pagetype_dom
	$(BIN)/python -m models.training.train_pagetype_cnn
	$(BIN)/python -m bench.pagetype_report
	$(BIN)/python -m models.training.fit_list_route

# The DOM/URL model on held-out sites (bench/results/pagetype-dom.md), page types in a replayed crawl with and
# without the site evidence (bench/results/pagetype-crawl.md, ~10 min), and the image models and the fusion
# (bench/results/pagetype.md; needs the screenshot cache of render-pagetype and train-pagetype).
bench-pagetype: setup
	$(BIN)/python -m bench.pagetype_dom_eval
	$(BIN)/python -m bench.pagetype_crawl
	$(BIN)/python -m bench.pagetype_report --no-fit

# The article gate (extraction/gate.py, models/gate/; needs ../shared/datasets and `make extras`): crawls the
# training sites' pages and their older copies through the replay (cached in ~/.cache/newscorpus/gate; ~40 min on
# 2 shared cores the first time), refits the page-type model out of fold for its own training pages, then
# site-grouped CV over 16 settings, an ablation, threshold and export (~17 min on 2 loaded cores).
train-gate: extras
	$(BIN)/python -m models.training.train_gate

# What `scrapy corpus` keeps of a replayed crawl of the held-out sites of every set, per set and year, beside the
# page-level model alone and trafilatura (bench/results/corpus-gate.md; ~15 min on 2 shared cores), and the
# metadata of fundus-articles by country beside trafilatura and Fundus (bench/results/metadata-fundus.md; needs
# `make fundus`).
bench-corpus: extras fundus
	$(BIN)/python -m bench.corpus_bench --out bench/results/corpus-gate
	$(BIN)/python -m bench.metadata_fundus

# Web2Text (paper 002; needs ../shared/datasets and `make extras` for torch): the unary and pairwise
# CNNs, exported to models/web2text/ (~3 min on 2 cores; features cached in ~/.cache/newscorpus).
train-web2text: extras
	$(BIN)/python -m models.training.train_web2text

# Web2Text vs the SVM pipeline vs trafilatura on the held-out sets, one run per set, and the
# one-core throughput (bench/results/web2text.md).
bench-web2text: extras
	$(BIN)/python -m bench.web2text_eval

# List extractor vs trafilatura on held-out WCXB list pages (bench/results/lists-wcxb.md).
bench-lists: extras
	$(BIN)/python -m bench.lists_eval

clean:
	rm -rf output build/docs .pytest_cache .mypy_cache .ruff_cache
