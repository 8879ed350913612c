# Two commands do everything on a fresh machine:
#   make verify   run the verification suite (standard profile) and build the report
#                 (exit 0: every claim verified, supported, reproduced or recorded)
#   make test     run the test suite
# Both create the virtual environment .venv on first use.
VENV   ?= .venv
PYTHON ?= python3
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.installed-stamp
PROFILE ?= standard
OUT     ?= reports/out

.PHONY: verify test bench quick long clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# gapverify verify runs the suite, draws the paper's figure and writes the report, keeps
# the results when the report fails, and exits with the run's code (0 every claim
# verified, supported, reproduced or recorded; 1 failed; 3 not verified). make itself
# exits 0 or 2 ("Error 1/3" above it says which): for the exact code call
# .venv/bin/gapverify verify.
verify: $(STAMP)
	$(VENV)/bin/gapverify verify --profile $(PROFILE) --out $(OUT)

quick: $(STAMP)
	$(VENV)/bin/gapverify verify --profile quick --out $(OUT)

# the bulk edge at the paper's kappa = 1, T = 4096..16384 (docs/kappa-one.md): about 45
# minutes and 4.4 GiB on 2 cores, for overnight, not CI
long: $(STAMP)
	$(VENV)/bin/gapverify verify --profile long --out reports/long

# two test processes (pytest-xdist) on the two cores the suite is sized for, one BLAS
# thread each (two processes already fill the cores): the sampled fixtures are made once
# and shared (tests/verification/conftest.py)
test: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest -n 2

bench: $(STAMP)
	$(PY) -m pytest tests/benchmarks --benchmark-enable --benchmark-columns=min,median,rounds

clean:
	rm -rf $(VENV) $(OUT) reports/gapverify.sqlite
