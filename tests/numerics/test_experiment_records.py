"""tests for numerics/experiment_record.py: every experiment's facts live on its record,
and the old views by name (time_left's, array_api's) are read off the records."""
from gapverify.numerics import array_api
from gapverify.numerics.experiments import EXPERIMENTS, RECORDS
from gapverify.numerics.plugins import record
from gapverify.verification.running import time_left


def test_the_function_views_are_the_records_functions():
    assert list(EXPERIMENTS) == list(RECORDS)
    assert all(EXPERIMENTS[n] is r.function for n, r in RECORDS.items())


def test_the_cost_views_are_the_records():
    assert time_left.REFERENCE_SECONDS["softmax.kappa"] == (0.000571, 1.81e-08, 0.0)
    assert time_left._QUADRATIC == {"softmax.kappa": 1.0, "markov.outliers": 200.0,
                                    "gradient.input": 200.0, "markov.edge": 200.0}
    assert record("markov.edge").reference_seconds(4096) == 6.66e-08 * 4096**2 + 7.02e-12 * 4096**3


def test_array_api_versions_are_recorded():
    assert {n for n, r in RECORDS.items() if r.array_api} == set(array_api.EXPERIMENTS)
    assert all(r.array_api_function() is array_api.EXPERIMENTS[n]
               for n, r in RECORDS.items() if r.array_api)


def test_an_experiment_without_facts_takes_the_defaults():
    r = record("no.such@experiment")
    assert r.seconds is None and r.arrays == (2, 6, 2) and r.order_cost(10) == 1000.0
