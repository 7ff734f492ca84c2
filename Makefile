# Quickstart: `make demo` and `make test` each create .venv if needed and install the project.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.docs-installed

# Python writes its bytecode cache even where the environment says not to (PYTHONDONTWRITEBYTECODE,
# set on some CI machines): the suite starts hundreds of Python processes (two pytest workers, CLI
# subprocesses, the wheel's venv), and without the cache each one recompiles every module it
# imports, and pytest re-rewrites the asserts of every test module in each worker (collection took
# 17 s of CPU per worker instead of 8.8). __pycache__ folders are ignored by git.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup demo reports reproduce test test-slow test-fast test-wheel test-doctests test-kernel-free lint format bench clean docs

# --no-compile: pip byte-compiles every module of every dependency at install (38 of the install's
# 59 s); Python compiles the modules a process imports on first import and keeps them (see above).
$(STAMP): pyproject.toml examples/plugin-adversary/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --no-compile -e ".[test,dask]" -e examples/plugin-adversary
	@touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/arena demo

# Maintainers: regenerate the committed reports the README links to (make demo writes under
# outputs/ only, so a newcomer's clone stays clean). The gallery's reports and their tournaments are
# listed once, in configs/reproduce.yaml: `make reproduce` resumes (finished cells are kept, e.g.
# after an interruption), `make reports` starts from scratch. Pass options through ARGS, e.g.
# `make reproduce ARGS="--only bandits executor=dask scheduler=HOST:8786"`.
reproduce: $(STAMP)
	$(VENV)/bin/arena reproduce $(ARGS)

reports: $(STAMP)
	$(VENV)/bin/arena reproduce --fresh $(ARGS)

# The suite CI runs (under its 15 minutes on 2 cores): lint and every test but the slow statistical
# ones on both cores, then four steps of one process each, two at a time (longest first): the
# documentation site with its tutorials executed, the kernel-free reference path, the installed
# wheel and the doctests. The docs extra is installed first: two setuptools builds in one source
# tree at once (the docs install and the wheel) would race.
test: $(DOCS_STAMP) lint
	$(PY) -m pytest -q -n auto -m "not slow" --durations=25 tests examples/plugin-adversary/tests
	$(MAKE) --no-print-directory -j2 --output-sync=target docs test-kernel-free test-wheel test-doctests

# The doctests of every module of the package.
test-doctests: $(STAMP)
	$(PY) -m pytest -q -p no:xdist -p no:cacheprovider --doctest-modules arena

# The kernels run as Python (NUMBA_DISABLE_JIT=1): every player against the reference loop on two
# adversaries (stochastic and adaptive; every adversary's own kernel is run by
# test_adversary_variants), the metric kernels against brute force, and the OCO players whose
# kernels have branches the compiled runs cannot show.
test-kernel-free: $(STAMP)
	NUMBA_DISABLE_JIT=1 $(PY) -m pytest -q -p no:xdist -m "not slow" -p no:cacheprovider \
		tests/arena/metrics/test_builtin.py tests/arena/engine/test_reference_equivalence.py \
		tests/arena/oco/test_engine.py tests/players/test_ogd.py tests/players/test_adagrad.py \
		tests/players/test_ons.py -k "not test_player_variants and not test_one_round_chunks \
		and not -fair_coin- and not -ftl_killer- and not -shifting_experts- and not -replay-"

# The slow tests (pytest -m slow): the gallery's replays of its pinned cells, the worst-case searches,
# declared bounds on longer games, ten-million-round runs. 11 min 55 s on 2 cores (2026-11-29);
# they no longer fit in CI's 15 minutes beside the rest, so run them before changing a player, a
# metric or a pinned result (`arena reproduce` also names every gallery number that moves off its
# pin).
test-slow: $(STAMP)
	$(PY) -m pytest -q -n auto -m slow --durations=10 tests examples/plugin-adversary/tests

# The package as users install it: build the wheel, install it into a fresh environment beside a
# distribution that owns top-level `players`, `adversaries` and `weak_learners` packages (the wheel
# installs only `arena`, so neither shadows the other), and play a game, a tournament and a report
# from a folder outside the repository (the configs ship inside).
# --no-compile: byte-compiling the dependencies' sources at install cost 30 of the step's 40 s of
# CPU, and Python compiles what the three commands import anyway. The commands run their kernels
# as Python (NUMBA_DISABLE_JIT=1): this step tests what the wheel installs, and the installed copy
# has no numba cache, so compiling the game's kernels again took 12 of its 19 s (the compiled
# kernels are the ones the suite has just tested, from the same sources). The tournament is two
# players on one adversary.
test-wheel: $(STAMP)
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(PY) -m pip wheel -q --no-deps -w "$$tmp/dist" . ; \
	$(PY) tests/helpers/squatter.py "$$tmp/dist" >/dev/null; \
	$(PY) -c 'import sys, zipfile; names = zipfile.ZipFile(sys.argv[1]).namelist(); \
		top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}; \
		assert top == {"arena"}, f"the wheel installs {sorted(top)}"' "$$tmp"/dist/regret_arena-*.whl; \
	$(PYTHON) -m venv "$$tmp/venv"; \
	"$$tmp/venv/bin/pip" install -q --no-compile "$$tmp"/dist/*.whl; \
	cd "$$tmp"; export NUMBA_DISABLE_JIT=1; \
	venv/bin/python -c 'import players, adversaries, weak_learners, arena.players.hedge; \
		assert players.OWNER == adversaries.OWNER == weak_learners.OWNER == "squatter"'; \
	venv/bin/arena run player=hedge adversary=fair_coin horizon=200 replicates=2 hydra.run.dir=run >/dev/null; \
	venv/bin/arena tournament tournament=demo tournament.players=[hedge,ftl] \
		tournament.adversaries=[fair_coin] tournament.horizon=200 tournament.replicates=2 \
		out=tour executor=serial >/dev/null; \
	venv/bin/arena report tour --name wheel --reports reports >/dev/null; \
	test -s run/results.parquet && test -s tour/manifest.json && test -s reports/wheel/report.md; \
	echo "wheel: installed beside top-level players/adversaries/weak_learners of another distribution, played a game, a tournament and a report outside the repository"

# While working: the test step alone, on every core, stopping at the first failure.
test-fast: $(STAMP)
	$(PY) -m pytest -q -n auto -m "not slow" -x tests

LINTED := arena tests benchmarks examples docs/_ext docs/conf.py

lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)

format: $(STAMP)
	$(VENV)/bin/ruff format $(LINTED)
	$(VENV)/bin/ruff check --fix $(LINTED)

# The documentation site (docs/index.md): the extra `docs` goes into .venv through its own stamp,
# so make demo and make test never install Sphinx. Warnings are errors (-W; --keep-going lists them
# all; -E rereads every page, so a cached page cannot hide one); nitpicky cross-references (-n) are
# off: numpy's and pandas' types would need intersphinx, which needs the network. The tutorials of
# docs/tutorials/ are executed on every build, and a cell that raises fails it. Output:
# outputs/docs/html/index.html.

# From a fresh clone (CI), `make test` installs the project with all three extras in one pip run
# (one resolution and one editable build, not two); after `make demo` it adds the docs extra.
$(DOCS_STAMP): pyproject.toml examples/plugin-adversary/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@test -f $(STAMP) || $(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --no-compile -e ".[test,dask,docs]" -e examples/plugin-adversary
	@touch $(STAMP) $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(VENV)/bin/sphinx-build -E -W --keep-going -q -b html docs outputs/docs/html

bench: $(STAMP)
	$(PY) benchmarks/bench_engine.py

clean:
	rm -rf $(VENV) outputs multirun .pytest_cache .ruff_cache docs/_generated
