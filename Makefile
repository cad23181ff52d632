# PyTorch Floors: `make serve` to read the site locally, `make test` to check everything.
# The Python the environments are made with: tools/setup_env.py picks the newest supported one found (python3.13,
# python3.12, python3.11, then python3, each run to read its real version: 3.11.5 or later, with venv) and says which,
# or what to install when none fits; PYTHON=... names one instead (checked the same way). It runs with the stdlib only.
PYTHON ?=
SETUP_ENV := tools/setup_env.py
SETUP_RUNNER := $(firstword $(shell command -v python3 python3.13 python3.12 python3.11 2>/dev/null))
# torch: on Linux the CPU build (from the wheel pip already has, else PyTorch's CPU index) unless TORCH=cuda asks for
# PyPI's CUDA build; macOS's PyPI wheel is a CPU build already. Both environments install it the same way.
TORCH ?= cpu
export TORCH
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# A second environment with ProperDocs 1.6.7 (a maintained fork of MkDocs 1.6) in place of MkDocs 1.6.1.
PD_VENV := .venv-properdocs
PD_BIN := $(PD_VENV)/bin
PD_PACKAGES := $(PD_VENV)/.packages
PD_STAMP := $(PD_VENV)/.installed
PROPERDOCS := properdocs==1.6.7
export NO_MKDOCS_2_WARNING := 1
# Python keeps its compiled modules (in __pycache__, which git ignores) whatever the shell says: with
# PYTHONDONTWRITEBYTECODE set (this project's CI image sets it), pytest rewrote every test module's asserts again in
# each of make test's pytest processes (collection took 6.4 s instead of 3.5 s each, issue 56).
unexport PYTHONDONTWRITEBYTECODE
# Tools that start other tools by name (mike starts mkdocs) must find the ones in .venv.
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: anchors setup environments serve build check patterns publish pdf record screenshots test lint typecheck patterns-and-beside pytest pytest-patterns pytest-fast pytest-network pytest-rest pytest-properdocs setup-properdocs browser bench bench-suite labs-brief machines torch clean

# pip shows what it installs (a line per package, a bar per download on a terminal): the first install
# takes minutes, and a silent one looks hung.
PINS = $$(grep -c '^[A-Za-z]' requirements.txt)
INSTALLING = @echo "setup: installing the $(PINS) pinned packages of requirements.txt into $(1) (torch alone is some hundreds of MB; pip's progress follows)"
INSTALLED = @echo "setup: $(1) is ready ($$(du -sh $(1) | cut -f1) on disk)"

# A new environment from the Python tools/setup_env.py picks (stdlib only, before any environment exists).
NEW_VENV = @test -n "$(SETUP_RUNNER)" || { echo "error: no python3 found: install Python 3.11.5 or later (Ubuntu/Debian: \
sudo apt install python3 python3-venv; macOS: brew install python@3.13)"; exit 1; }; \
	python="$$($(SETUP_RUNNER) $(SETUP_ENV) python $(PYTHON))" && echo "$$python -m venv $(1)" && "$$python" -m venv $(1)
# requirements.txt into an environment, torch from where tools/setup_env.py says (the CPU build on Linux).
PIP_INSTALL_PINS = @torch="$$($(1)/bin/python $(SETUP_ENV) torch)" \
	&& echo "$(1)/bin/python -m pip install --progress-bar on $${torch:+$$torch }--requirement requirements.txt" \
	&& $(1)/bin/python -m pip install --progress-bar on $$torch --requirement requirements.txt

$(STAMP): requirements.txt pyproject.toml
	$(call NEW_VENV,$(VENV))
	$(call INSTALLING,$(VENV))
	$(call PIP_INSTALL_PINS,$(VENV))
	$(BIN)/python -m pip install --quiet --no-deps --editable .
	$(call INSTALLED,$(VENV))
	touch $(STAMP)

## setup: create .venv and install requirements.txt and the package
setup: $(STAMP)

# .venv's install (requirements.txt, resolved the same way), then MkDocs and the two packages only it needs swapped
# for ProperDocs, which aliases the `mkdocs` module for Material and the plugins. Not `--no-deps` from an edited copy:
# requirements.txt does not pin everything (torch's setuptools). `pip check` may then report only the `mkdocs`
# those packages still declare; the last check proves no MkDocs distribution is left.
$(PD_PACKAGES): requirements.txt
	rm -rf $(PD_VENV)
	$(call NEW_VENV,$(PD_VENV))
	$(call INSTALLING,$(PD_VENV))
	$(call PIP_INSTALL_PINS,$(PD_VENV))
	$(PD_BIN)/python -m pip uninstall --quiet --yes mkdocs mkdocs-get-deps mergedeep
	$(PD_BIN)/python -m pip install --quiet --no-deps $(PROPERDOCS)
	$(call INSTALLED,$(PD_VENV))
	touch $(PD_PACKAGES)

$(PD_STAMP): $(PD_PACKAGES) pyproject.toml
	$(PD_BIN)/python -m pip install --quiet --no-deps --editable .
	@$(PD_BIN)/python -m pip check | grep -v -e ' requires mkdocs, which is not installed\.$$' \
	  && { echo "error: $(PD_VENV) has broken requirements (above)"; exit 1; } || true
	@! $(PD_BIN)/python -m pip show mkdocs mkdocs-get-deps mergedeep 2>/dev/null | grep . \
	  || { echo "error: $(PD_VENV) still holds an MkDocs package"; exit 1; }
	touch $(PD_STAMP)

## setup-properdocs: create .venv-properdocs: .venv's requirements with ProperDocs 1.6.7 in place of MkDocs 1.6.1
setup-properdocs: $(PD_STAMP)

## environments: set up .venv and .venv-properdocs side by side (make test needs both)
# Two installs at once: on a fresh clone on two cores (AMD EPYC) they took 70 s together, 102 s one after the other
# (issue 56). Each environment's own steps keep their order. Their lines are kept whole where make can (GNU make 4's
# --output-sync; macOS's make is 3.81, which has not got it).
KEEP_LINES_WHOLE := $(if $(filter output-sync,$(.FEATURES)),--output-sync=line)
environments:
	@$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) -j2 $(KEEP_LINES_WHOLE) setup setup-properdocs

## serve: set up, then serve the site at http://127.0.0.1:8000 (an edit renders again only the pages it changes)
serve: setup
	$(BIN)/mkdocs serve --dirty --dev-addr 127.0.0.1:8000

## build: set up, then build the site strictly into site/, and verify every page and block came from the floors plugin
build: setup
	$(BIN)/mkdocs build --strict
	$(BIN)/python -m pytorch_floors verify site $(if $(FLOORS_EXEC_ONLY)$(filter off,$(FLOORS_EXEC)),--partial)

## publish: deploy the site as edition EDITION=YYYY.MM into gh-pages with mike, with the root 404 (PUSH=1 pushes)
publish: setup
	@test -n "$(EDITION)" || { echo "usage: make publish EDITION=YYYY.MM [PUSH=1]"; exit 1; }
	$(BIN)/python -m pytorch_floors publish $(EDITION) $(if $(filter 1,$(PUSH)),--push)

## pdf: build, then print Part 0, each floor and the whole edition to PDF in site/pdf/ (headless chromium)
pdf: setup browser
	FLOORS_HANDOUTS=on $(BIN)/mkdocs build --strict
	$(BIN)/python -m pytorch_floors handouts --site site

## browser: make sure Debian's chromium is there for the browser tests (never a downloaded one); FLOORS_CHROMIUM names another
## It also needs a font with Chinese glyphs for the Chinese pages and handouts (Debian's fonts-noto-cjk where fontconfig has none).
browser:
	@test -n "$$FLOORS_CHROMIUM" || command -v chromium >/dev/null || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	@if command -v fc-list >/dev/null && [ -z "$$(fc-list :lang=zh family)" ]; then \
	  echo "installing Debian's fonts-noto-cjk: the Chinese pages and handouts print with a CJK font"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk >/dev/null; fi

## anchors: build, then append the site's new section anchors to anchors.lock (never removes one)
anchors: build
	$(BIN)/python -m pytorch_floors anchors update --site site

lint: setup
	$(BIN)/ruff check src tests bench snippets tools
	$(BIN)/ruff format --check src tests bench snippets tools
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml

typecheck: setup
	$(BIN)/mypy

# The pattern tests time proofs, so they run alone, and leave what they measured in the proof cache; the rest
# runs on two workers, which share one build of the site (it reads that cache), one publish and one printing
# (tests/conftest.py: once_per_run), and the ProperDocs build of the same site, compared with it.
pytest-patterns: setup
	$(BIN)/pytest -m patterns

# The fast lane's tests: they build no site, time nothing and wait out no limit.
FAST_LANE := not slow and not build and not browser and not patterns and not properdocs and not network and not waits

# The tests that ask PyPI and PyTorch's index what pip would install: they mostly wait on the network, one pip at
# a time, and build nothing, so they run beside the pattern tests (issue 56: a minute of a worker in the rest).
NETWORK_LANE := network and not slow and not build and not browser and not patterns and not properdocs

# Everything but the pattern tests and the fast lane (make test runs those beside each other first).
# Three workers on two cores: a worker spends much of this phase waiting (on a build another holds the lock
# for, a browser, a subprocess), and a third fills some of those waits. On one AMD EPYC (2 cores), set up:
# 550 s on two workers, 486 s on three; from a fresh clone, whose first build runs every proof: 558 and 551 s.
REST_WORKERS ?= 3
# It logs each test's phases (tests/conftest.py: FLOORS_TEST_TIMELINE) and, beside it, every process's CPU time
# (bench/cpu_sampler.py, Linux), and ends with where its time went: wall time per worker and test, and CPU time
# per test with what it started (a browser, a build, a kernel), since three workers share two cores.
REST_TIMELINE := test-output/timeline-rest.jsonl
REST_CPU := test-output/cpu-rest.jsonl
pytest-rest: setup browser setup-properdocs
	@mkdir -p test-output && rm -f $(REST_TIMELINE) $(REST_CPU)
	@$(BIN)/python bench/cpu_sampler.py $(REST_CPU) & sampler=$$!; \
	FLOORS_TEST_TIMELINE=$(CURDIR)/$(REST_TIMELINE) $(BIN)/pytest -m "not patterns and not ($(FAST_LANE)) and not ($(NETWORK_LANE))" \
	  -n $(REST_WORKERS) --dist worksteal --durations=25; status=$$?; \
	kill $$sampler 2>/dev/null; wait $$sampler; \
	$(BIN)/python bench/timeline.py $(REST_TIMELINE) --top 12 --cpu $(REST_CPU); exit $$status

# The fast lane's tests in one process: make test runs them on the core the pattern tests leave free.
pytest-fast: setup
	$(BIN)/pytest -m "$(FAST_LANE)" -q

# The network lane's tests, in one process beside the pattern tests.
pytest-network: setup
	$(BIN)/pytest -m "$(NETWORK_LANE)" -q

# The whole site built strictly with ProperDocs (from .venv-properdocs) and with MkDocs: the same pages, blocks,
# claims (part of pytest-rest; this runs them alone).
pytest-properdocs: setup setup-properdocs
	$(BIN)/pytest -m properdocs

pytest: pytest-patterns pytest-fast pytest-network pytest-rest

## screenshots: the browser tests that tour the site, leaving their screenshots in test-output/ for a person to look over
# (every floor's whole page light and dark, the phone's first screens); make test takes none of them.
screenshots: setup browser
	FLOORS_SCREENSHOTS=on $(BIN)/pytest tests/test_reader.py tests/test_phone.py -n 2 -q

## check: the fast lane: lint, types and the tests that build no site, time nothing and wait out no limit, on two workers
check: lint typecheck
	$(BIN)/pytest -m "$(FAST_LANE)" -q -n 2

## patterns: run every proof as the build does and require each of its claims to hold (about two minutes)
patterns: setup
	$(BIN)/pytest -m patterns -q

# What runs on the other core while the pattern tests run, one after the other: each is single-threaded and
# times nothing, and a proof's pattern holds on a busy machine.
BESIDE_PATTERNS := typecheck pytest-fast pytest-network

## patterns-and-beside: the pattern tests, and beside them, on the other core, mypy and then the fast lane's tests
# Every side runs to its end; the phase fails on any of them and names each that failed.
patterns-and-beside: setup
	@log=$$(mktemp); ( for target in $(BESIDE_PATTERNS); do \
	$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) $$target >>$$log 2>&1 || echo $$target >>$$log.failed; \
	done ) & beside=$$!; \
	$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) pytest-patterns || echo pytest-patterns >>$$log.patterns; \
	wait $$beside; cat $$log; failed=$$(cat $$log.failed $$log.patterns 2>/dev/null); rm -f $$log $$log.failed $$log.patterns; \
	for target in $$failed; do echo "patterns-and-beside: $$target failed"; done; \
	[ -z "$$failed" ]

# make test's phases, in order: each runs whatever failed before it, and the last line lists the failures.
PHASES := lint patterns-and-beside pytest-rest

## test: set up, then lint, type-check and run every test (unit, build, browser), every phase even after a failure
# It prints each phase's wall time on one line (`make test: phase seconds: lint=2 ...`), which bench/suite.py reads.
# Its last lines: the phases' seconds, their total against the budget (a line, not a failure), and the verdict.
TEST_BUDGET := 600
test: environments browser
	@failed=""; took=""; begun=$$(date +%s); for phase in $(PHASES); do start=$$(date +%s); \
	$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) $$phase || failed="$$failed $$phase"; \
	took="$$took $$phase=$$(( $$(date +%s) - start ))"; done; echo "make test: phase seconds:$$took"; \
	echo "make test: $$(( $$(date +%s) - begun )) s in all against a budget of $(TEST_BUDGET) s on two cores \
	($$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1))"; \
	if [ -n "$$failed" ]; then echo "make test: failed phases:$$failed"; exit 1; fi; echo "make test: every phase passed"

## machines: build the site strictly as each of the eleven tiers of pytorch_floors.tiers (TIERS="crowded avx2": some) and print the table
machines: setup
	$(BIN)/python bench/machines.py $(foreach tier,$(TIERS),--tier $(tier))

## record: run every proof as tier TIER=<name> (one of pytorch_floors.tiers, or any name: this machine as it is) into recordings/
record: setup
	@test -n "$(TIER)" || { echo "usage: make record TIER=<name>   (e.g. ci-2core, one-core-scalar)"; exit 1; }
	$(BIN)/python -m pytorch_floors record --tier $(TIER) $(if $(STANDS_FOR),--stands-for "$(STANDS_FOR)")

## torch: move the build to torch VERSION=X: the pin where it is written, setup, the build's recordings and a strict build on X, then what changed (DRY_RUN=1 shows each step and does none)
# Not after setup: the pin moves first, and tools/move_torch.py (stdlib only) runs `make setup` for the new one.
torch:
	@test -n "$(VERSION)" || { echo "usage: make torch VERSION=X [DRY_RUN=1]   (e.g. VERSION=2.15.0)"; exit 1; }
	$(or $(SETUP_RUNNER),python3) tools/move_torch.py $(VERSION) $(if $(filter 1,$(DRY_RUN)),--dry-run)

## bench: build benchmarks (cold, warm, render-only) for bench/build.py
bench: setup
	$(BIN)/python bench/build.py --record

## labs-brief: grade every lab, right and planted answers, quiet, beside 4 hogs per core and on one scalar core (LAB=8-chip: one)
labs-brief: setup
	$(BIN)/python bench/labs_brief.py --record --check $(foreach lab,$(LAB),--lab $(lab))

## bench-suite: time `make test` per phase in a fresh clone of HEAD, setup included (WARM=1: in this checkout, set up)
bench-suite:
	$(or $(SETUP_RUNNER),python3) bench/suite.py --record $(if $(WARM),--warm)

clean:
	rm -rf site .cache test-output
