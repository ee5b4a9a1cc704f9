# robot_core: the two commands of the README are `make demo` and `make test`.
# Both run `make setup` first, which is idempotent (seconds when nothing changed).
# ROBOT_CORE_VENV=/path/to/venv puts the venv elsewhere (scripts/bootstrap.py reads it too).
VENV := $(or $(ROBOT_CORE_VENV),.venv)
PY := $(VENV)/bin/python
export PYTHON

.PHONY: setup setup-rllib demo test lint bench clean

setup:
	@sh scripts/setup.sh

# Ray RLlib (optional, heavy: ~300 MB): requirements/rllib.txt on top of the default venv; bench/rl_rllib.py uses it.
setup-rllib: setup
	@$(PY) -m pip install --progress-bar off -r requirements/rllib.txt || { echo "set-up of Ray RLlib failed (see pip's message above); robot_core works without it" >&2; exit 1; }

demo: setup
	@$(PY) -m robot_core.demo

# --durations=20: every log of a full run names its 20 slowest set-ups, tests and teardowns (issue #13: the
# suite's time). Two pytest-xdist workers, each test file whole on one of them (its module fixtures shared) and
# each worker on a ROS domain of its own (doc/testing.md); TEST_WORKERS=0 runs everything in one process.
# --max-worker-restart 0: a worker that test/hang_watch.py aborted is not replaced (pytest-xdist 3.8's loadfile
# scheduler can wait forever for a replacement's work after a crash); its test fails and the others finish.
TEST_WORKERS ?= 2
test: setup
	@$(PY) -m pytest -q -p no:cacheprovider --durations=20 -n $(TEST_WORKERS) --dist loadfile --max-worker-restart 0

lint: setup
	@$(VENV)/bin/ruff check .

bench: setup
	@for b in bench/[!_]*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) build
