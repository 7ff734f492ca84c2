# Quickstart: `make demo` and `make test` each create .venv if needed and install the project.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo reports test test-fast test-wheel lint format bench clean

$(STAMP): pyproject.toml examples/plugin-adversary/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test,dask]" -e examples/plugin-adversary
	@touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/arena demo

# Maintainers: regenerate the committed reports the README links to (make demo writes under
# outputs/ only, so a newcomer's clone stays clean).
reports: $(STAMP)
	$(VENV)/bin/arena demo --report reports/demo
	$(VENV)/bin/arena tournament tournament=scale_invariance
	$(VENV)/bin/arena report outputs/tournaments/scale_invariance --name scale-invariance \
		--metric mistakes --metric loss --metric comparator_regret
	$(VENV)/bin/arena tournament tournament=bandits
	$(VENV)/bin/arena report outputs/tournaments/bandits --name bandits \
		--metric pseudo_regret
	$(VENV)/bin/arena tournament tournament=game_dynamics
	$(VENV)/bin/arena report outputs/tournaments/game_dynamics --name game-dynamics
	$(VENV)/bin/arena tournament tournament=changing_environments \
		out=outputs/tournaments/luo-tables/changing_environments
	$(VENV)/bin/arena tournament tournament=tree_experts \
		out=outputs/tournaments/luo-tables/tree_experts
	$(VENV)/bin/arena report outputs/tournaments/luo-tables --name luo-tables-2.3-2.4 \
		--metric adaptive_regret --metric tv_regret --metric tree_regret
	rm -rf outputs/tournaments/second-order
	for t in second_order_kappa second_order_sketch second_order_wdbc second_order_digits; do \
		$(VENV)/bin/arena tournament tournament=$$t out=outputs/tournaments/second-order/$$t \
			progress=false || exit 1; \
	done
	$(VENV)/bin/arena report outputs/tournaments/second-order --name second-order \
		--metric mistakes
	rm -rf outputs/tournaments/boosting
	for t in boosting boosting_scaling boosting_scaling_ol boosting_classification \
		boosting_regression; do \
		$(VENV)/bin/arena tournament tournament=$$t out=outputs/tournaments/boosting/$$t || exit 1; \
	done
	$(VENV)/bin/arena report outputs/tournaments/boosting --name boosting \
		--metric mistakes --metric test_error --metric loss --metric vote_test_error

# The whole suite: lint, every test (slow statistical ones included), the doctests, the
# kernel-free reference path (NUMBA_DISABLE_JIT=1) on the fast tests, and the installed wheel.
test: $(STAMP) lint
	$(PY) -m pytest -q -n auto -m "slow or not slow" tests examples/plugin-adversary/tests
	$(PY) -m pytest -q --doctest-modules arena players adversaries weak_learners
	NUMBA_DISABLE_JIT=1 $(PY) -m pytest -q -n auto -m "not slow" -p no:cacheprovider \
		tests/arena/metrics/test_builtin.py tests/arena/engine/test_reference_equivalence.py \
		tests/arena/oco/test_engine.py tests/players/test_ogd.py tests/players/test_adagrad.py \
		tests/players/test_ons.py
	$(MAKE) test-wheel

# The package as users install it: build the wheel, install it into a fresh environment and play a
# game, a tournament and a report from a folder outside the repository (the configs ship inside).
test-wheel: $(STAMP)
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(PY) -m pip wheel -q --no-deps -w "$$tmp/dist" . ; \
	$(PYTHON) -m venv "$$tmp/venv"; \
	"$$tmp/venv/bin/pip" install -q "$$tmp"/dist/*.whl; \
	cd "$$tmp"; \
	venv/bin/arena run player=hedge adversary=fair_coin horizon=200 replicates=2 hydra.run.dir=run >/dev/null; \
	venv/bin/arena tournament tournament=demo tournament.horizon=200 tournament.replicates=2 \
		out=tour executor=serial >/dev/null; \
	venv/bin/arena report tour --name wheel --reports reports >/dev/null; \
	test -s run/results.parquet && test -s tour/manifest.json && test -s reports/wheel/report.md; \
	echo "wheel: installed, played a game, a tournament and a report outside the repository"

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow" tests

LINTED := arena players adversaries weak_learners tests benchmarks examples

lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)

format: $(STAMP)
	$(VENV)/bin/ruff format $(LINTED)
	$(VENV)/bin/ruff check --fix $(LINTED)

bench: $(STAMP)
	$(PY) benchmarks/bench_engine.py

clean:
	rm -rf $(VENV) outputs multirun .pytest_cache .ruff_cache
