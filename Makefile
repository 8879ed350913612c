# Two commands do everything on a fresh machine:
#   make verify   run the verification suite (standard profile) and build the report
#   make test     run the test suite
# Both create the virtual environment .venv on first use.
VENV   ?= .venv
PYTHON ?= python3
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.installed-stamp
PROFILE ?= standard
OUT     ?= reports/out

.PHONY: verify test bench quick clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

verify: $(STAMP)
	@mkdir -p $(OUT)
	$(VENV)/bin/gapverify run --profile $(PROFILE) --json $(OUT)/results.json; \
	status=$$?; \
	if [ $$status -le 1 ] || [ $$status -eq 3 ]; then \
	  $(VENV)/bin/gapverify paper-figure --out $(OUT) || exit $$?; \
	  $(VENV)/bin/gapverify report --from $(OUT)/results.json --store reports/gapverify.sqlite --out $(OUT) \
	    || echo "gapverify report: exit $$? (see above); the run's results are in $(OUT)/results.json and are not lost"; \
	  echo "Outputs: $(OUT)/report.pdf (where LaTeX is complete), $(OUT)/report.tex, $(OUT)/tables/, $(OUT)/figures/, $(OUT)/depth_profile.png"; \
	fi; \
	exit $$status

quick:
	$(MAKE) verify PROFILE=quick

test: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m pytest tests/benchmarks --benchmark-enable --benchmark-columns=min,median,rounds

clean:
	rm -rf $(VENV) $(OUT) reports/gapverify.sqlite
