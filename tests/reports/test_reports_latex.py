"""Tests of reports/latex.py (escaping), reports/numbers.py (numbers whose digits follow their error) and of the
verdict words of reports/results.py. Pure functions: no sampling, no LaTeX engine."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from gapverify.reports.latex import PACKAGES, PACKAGES_COMMENT, TeX, escape, math_or_text
from gapverify.reports.numbers import (
    interval, num_shorthand, rate_fraction, rounded_like, shorthand, significant, trim_zeros,
)
from gapverify.reports.results import VERDICT_WORDS, split_case, verdict_word

LATEX_SPECIALS = "_%&#$~^\\{}"


# ----------------------------------------------------------------------------- escaping
def test_escape_of_the_issue_example():
    assert escape("a_b%&#") == r"a\_b\%\&\#"


@pytest.mark.parametrize("text", ["markov.singular_law", "x_{1}^2 & 50% #3 $5 ~ \\ |a|",
                                  "s1 - 1 ~ 0.5/T (measured; BCC gives no rate)",
                                  "limit 1.0001±0.00056 κ ≤ 2", "10 < T > 5"])
def test_escape_leaves_no_bare_special(text):
    out = escape(text)
    # every special is either a command's own character or preceded by a backslash
    stripped = re.sub(r"\\[A-Za-z]+|\\.", "", out)  # remove commands and escaped chars
    stripped = stripped.replace("{", "").replace("}", "")  # braces of the commands
    assert not set(stripped) & set("_%&#$~^\\"), (text, out)
    assert "|" not in out.replace(r"\ensuremath{|}", "")  # an OT1 bar prints an em dash


def test_escape_keeps_tex_and_returns_tex():
    src = TeX(r"$\sqrt{T}$")
    assert escape(src) is src
    assert isinstance(escape("a_b"), TeX)


def test_registry_latex_kept_only_when_it_needs_no_other_package():
    assert math_or_text(r"\sqrt{T}\,s_2(A)", math=True) == r"$\sqrt{T}\,s_2(A)$"
    # \mathbb needs amssymb, which a table must not require: turned into escaped text
    out = math_or_text(r"$\mathbb{E}_W\|x\|_F^2$ grows")
    assert r"\mathbb" not in out and "grows" in out
    assert escape("𝔼 x") == "E x"  # decomposed rather than \mathbb (amssymb)
    assert "中" not in escape("中")  # unknown characters become a visible '?'
    # unbalanced braces are not trusted either
    assert "{" not in re.sub(r"\\[A-Za-z]+\{|\{\\[A-Za-z]+\}", "", math_or_text("a{b"))


def test_packages_comment_names_exactly_the_allowed_packages():
    assert PACKAGES == ("booktabs", "siunitx", "amsmath", "threeparttable", "tabularx")
    assert PACKAGES_COMMENT.startswith("%") and all(p in PACKAGES_COMMENT for p in PACKAGES)


# ----------------------------------------------------------------------------- numbers
@pytest.mark.parametrize("value, se, expected", [
    (0.04903, 0.00121, "0.0490(12)"),      # the issue's example
    (2.0123, 0.034, "2.012(34)"),
    (1.00047, 5.7e-6, "1.0004700(57)"),
    (123.4, 5.6, "123.4(5.6)"),             # siunitx prints 123.4(56)
    (1.0e-5, 3.0e-7, "1.000(30)e-5"),
    (0.5, 0.95, "0.50(95)"),                # error larger than the value
    (1.0, 0.0999, "1.00(10)"),              # 0.0999 rounds up to 0.10: one place less
    (-0.0027176, 0.00058, "-0.00272(58)"),
])
def test_shorthand_keeps_two_significant_digits_of_the_error(value, se, expected):
    assert shorthand(value, se) == expected


def test_digits_follow_the_interval():
    # the same value gets one more decimal for every tenfold smaller error
    outs = [shorthand(math.pi, se) for se in (1e-1, 1e-2, 1e-3, 1e-4)]
    assert outs == ["3.14(10)", "3.142(10)", "3.1416(10)", "3.14159(10)"]


@pytest.mark.parametrize("seed", range(5))
def test_value_is_rounded_at_the_last_digit_of_the_error(seed):
    rng = np.random.default_rng(seed)
    for _ in range(200):
        se = 10.0 ** rng.uniform(-9, 1) * rng.uniform(1, 9.9)
        value = rng.normal(1.0, 1.0)
        text = shorthand(value, se)
        m = re.fullmatch(r"(-?\d+)(?:\.(\d+))?\((\d+(?:\.\d+)?)\)(?:e(-?\d+))?", text)
        assert m, text
        digits = m.group(3).replace(".", "").lstrip("0")
        assert 1 <= len(digits) <= 2, text  # two significant digits (one after carrying)
        exponent = int(m.group(4) or 0)
        decimals = len(m.group(2) or "")
        shown = float(m.group(1) + "." + (m.group(2) or "0")) * 10.0**exponent
        place = 10.0 ** (exponent - decimals)
        assert abs(shown - value) <= 0.5 * place * (1 + 1e-9), (value, se, text)
        err_digits = m.group(3)
        err = (float(err_digits) * place if "." not in err_digits
               else float(err_digits) * 10.0**exponent)
        assert abs(err - se) <= 0.5 * place * (1 + 1e-9) + 1e-300, (value, se, text)


def test_numbers_without_an_error():
    assert shorthand(2.220446049250313e-16, 0.0) == "2.22045e-16"
    assert significant(2.220446049250313e-16) == "2.2e-16"
    assert significant(0.0) == "0" and significant(1.0) == "1"
    assert shorthand(float("nan"), 0.1) == "---" and shorthand(1.0, float("nan")) == "1"


def test_interval_ends_rounded_like_the_measurement():
    assert rounded_like(0.04903, 0.00121) == "0.0490"
    q = 3.42
    got = interval(0.04903, q * 0.00121, 0.00121)
    assert got == r"[\num{0.0449}, \num{0.0532}]"
    assert num_shorthand(0.04903, 0.00121) == r"\num{0.0490(12)}"


def test_trim_zeros_and_rate_fractions():
    assert trim_zeros("1.0000000") == "1" and trim_zeros("0.0810") == "0.081"
    assert trim_zeros("2.500e-3") == "2.5e-3" and trim_zeros("100") == "100"
    assert rate_fraction(2 / 3) == "2/3" and rate_fraction(0.5) == "1/2"
    assert rate_fraction(1.0) == "1" and rate_fraction(0.85) == "0.85"


# ----------------------------------------------------------------------------- words
def test_a_conjecture_never_reads_as_verified():
    assert verdict_word("pass", "theorem") == "verified"
    assert verdict_word("pass", "derived") == "verified"
    assert verdict_word("pass", "conjecture") == "supported"
    assert verdict_word("pass", "empirical") == "reproduced"
    assert verdict_word("pass", "some new status") != "verified"
    assert verdict_word("fail", "theorem") == "failed"
    assert set(VERDICT_WORDS) == {"theorem", "derived", "conjecture", "empirical"}


def test_split_case():
    assert split_case("sr_X [gamma=1, depth=2]") == ("sr_X", "gamma=1, depth=2")
    assert split_case("law:bulk") == ("law:bulk", "")


def test_a_number_in_exponent_form_does_not_widen_its_column():
    # a correlation measured at 1e-5 (kq merged_sq_corr): set by siunitx, not aligned, so
    # the S column's table-format keeps no exponent field (it had pushed the per-check
    # table 44-61 pt past the page)
    from gapverify.reports.cells import Number, s_cell
    from gapverify.reports.numbers import table_format

    cells = [s_cell(Number(c), unalign_exponent=True)
             for c in ("-9.9(97)e-6", "0e-6", "1.002914(35)", "---")]
    assert cells[:2] == [r"{\num{-9.9(97)e-6}}", r"{\num{0e-6}}"]
    assert cells[2:] == ["1.002914(35)", "{---}"]
    assert table_format(cells) == "1.6(2)"


def test_a_single_model_family_is_named_by_its_formula():
    from gapverify.verification.judging.verdict import family_label

    assert family_label(["L"], False) == "unbiased"
    assert family_label(["L + c/T"], False) == "L + c/T"
    assert family_label(["a", "b", "c"], False) == "3 models"
    assert family_label(["L"], True) == "theory's mean"


def test_a_zero_prediction_prints_0_never_with_an_exponent():
    from gapverify.reports.numbers import rounded_like, trim_zeros

    assert trim_zeros(rounded_like(0.0, 1e-5)) == "0"  # was "0e-5": 0 x 10^-5
    assert trim_zeros("0.0000") == "0" and trim_zeros("2.500e-3") == "2.5e-3"


def test_paper_result_short_forms():
    from gapverify.reports.table_cells import paper_short

    assert paper_short("Bordenave-Caputo-Chafai 2012 Theorem 1.1 (the paper's Theorem 2)") == "Thm 2"
    assert paper_short("the paper's Proposition 1 (key-query attention)") == "Prop. 1"
    assert paper_short("the paper's proposition on rank collapse (number not confirmed)") == "Prop."
    assert paper_short("beyond the paper (a figure)") == "beyond"
    assert paper_short("") == "---"


def test_ascii_symbols_of_the_notes_are_typeset():
    from gapverify.reports.prose import prose

    assert r"\chi ^{2}_{d}" in prose("E[1/chi2_d] = 1/(d - 2)")
    assert prose("extrapolated 2.0193 +- 0.0054") == r"extrapolated $2.0193 \pm 0.0054$"


def test_captions_carry_the_commit_and_a_run_with_set_its_parameters():
    from gapverify.reports.checks_table import checks_table
    from gapverify.reports.summary_table import summary_table

    run = {"profile": "quick", "level": 0.01,
           "provenance": {"git_commit": "969bee7f7707561bc", "git_dirty": True},
           "claims": [{"claim": "width.stable_rank", "status": "derived", "verdict": "pass",
                       "root_seed": 7, "replicates": 4, "sizes": [64], "cases": None,
                       "parameters": {"s2": 0.25, "gamma": 0.5, "mu": -0.34657359027997264,
                                      "sigma_V": 1.0},
                       "checks": []}]}
    for table in (checks_table(run), summary_table(run)):
        assert r"commit \texttt{969bee7} with uncommitted changes" in table
        assert r"$s^2=0.25$" in table and r"$\gamma=0.5$" in table
    assert "Case" not in checks_table(run)  # no empty column: the heading holds them


def test_a_result_finds_the_registry_check_that_judged_it():
    """Two registry checks can share a label: depth.stable_rank's sr_X is a stated rate at
    depth >= 2 and a 1/T model family at depth 1 (split by domain); markov.outliers'
    sqrtT_lambda2 is judged through the Ginibre ratio and its raw radius recorded. The
    result's statistic and case pick the right one, so the figure draws the family's fit at
    depth 1 (it drew none when the first check of that label was taken)."""
    import numpy as np

    from gapverify.reports.claim_figures import _model_curve
    from gapverify.reports.table_cells import _registry_check

    base = {"depth": 1, "gamma": 0.5, "s2": 0.35, "mu": -0.35, "sigma_V": 1.0}
    one, _ = _registry_check("depth.stable_rank", "sr_X @ depth=1",
                             {"statistic": "sr_X", "case": base})
    two, _ = _registry_check("depth.stable_rank", "sr_X @ depth=2",
                             {"statistic": "sr_X", "case": {**base, "depth": 2}})
    assert one.models and one.rate is None
    assert not two.models and two.rate is not None
    ratio, _ = _registry_check("markov.outliers", "sqrtT_lambda2",
                               {"statistic": "sqrtT_lambda2_ginibre", "case": {"s2": 0.5}})
    raw, _ = _registry_check("markov.outliers", "sqrtT_lambda2",
                             {"statistic": "sqrtT_lambda2", "case": {"s2": 0.5}})
    assert ratio.asserted and not raw.asserted
    T = np.array([64.0, 128.0, 256.0, 512.0])
    mean = 1.5 - 2.0 / T
    result = {"statistic": "sr_X", "case": base, "models": ["1/T", "1/T + 1/T^2"],
              "label": "sr_X @ depth=1"}
    fitted = _model_curve({"claim": "depth.stable_rank"}, result, T, mean, np.full(4, 1e-3))
    assert fitted is not None and abs(fitted[0](1e9) - 1.5) < 1e-6


def test_a_figure_title_keeps_the_norm_bars_of_its_latex():
    # pylatexenc alone turns \|W_1\|_2^2 into "W_1_2^2", a different quantity
    from gapverify.reports.claim_figures import _plain

    assert _plain(r"$\|W_1\|_2^2\|A\|_2^2$: $4\sigma_V^2 d$") == "‖W_1‖_2^2‖A‖_2^2: 4σ_V^2 d"
