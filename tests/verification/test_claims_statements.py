"""The registry's statements as a reader sees them: the paper's result of each claim, where
derived predictions are derived, the laws stated as laws, the sizes each check judges,
exact values beside floats, and Markdown without reStructuredText."""
import json

import sympy as sp

from gapverify.theory.laws import QuarterCircle, UniformDisc
from gapverify import cli
from gapverify.verification.claims.registry import BUILT_IN, CLAIMS, SOURCES, get_claim, package_claim_ids
from gapverify.verification.claims.registry.paper_results import BEYOND, PAPER_RESULTS
from gapverify.verification.tools.claimdocs import describe_claim, rst_to_markdown


def test_every_claim_names_its_paper_result():
    assert set(PAPER_RESULTS) == {c for c in CLAIMS if SOURCES[c] == BUILT_IN}
    for cid in package_claim_ids():  # the peers' claims name theirs in their own files
        assert get_claim(cid).paper_result, cid
    assert get_claim("markov.singular_law").paper_result.endswith("(the paper's Theorem 2)")
    assert "Proposition 1" in get_claim("kq.attention").paper_result
    for cid in ("causal.cesaro", "causal.depth", "heavy_tail.edge", "variants.relu",
                "variants.normalization", "models.gpt2", "training.fix"):
        assert get_claim(cid).paper_result.startswith(BEYOND), cid


def test_every_derived_prediction_says_where_it_is_derived():
    for claim in map(get_claim, package_claim_ids()):
        for p in claim.predictions:
            where = claim.derivation(p.name)
            assert bool(where) == (p.status == "derived"), (claim.id, p.name)
            if where:
                doc = "docs/peers.md" if claim.id.startswith("peers.") else "docs/claims.md"
                assert doc in where, (claim.id, p.name)


def test_law_claims_state_the_law_and_its_edge():
    st = get_claim("markov.singular_law").statement()[0]
    assert isinstance(st.rhs, QuarterCircle) and st.lhs.args[0] == sp.Symbol("law")
    s2 = sp.Symbol("s2", positive=True)
    assert sp.simplify(st.rhs.edge - 2 * sp.sqrt(sp.exp(s2) - 1)) == 0
    assert "quarter circle on" in get_claim("markov.singular_law").statement_latex()
    disc = get_claim("markov.circular_law").statement()[0].rhs
    assert isinstance(disc, UniformDisc)
    # the number the checks scale is still the edge
    values = get_claim("markov.singular_law").predict_numbers({"s2": 1.0, "mu": 0.0})
    assert abs(values["law"] - 2 * (sp.E.evalf() - 1) ** 0.5) < 1e-12


def test_describe_gives_the_sizes_each_check_judges(capsys):
    d = describe_claim("markov.outliers", "standard")
    sizes = list(get_claim("markov.outliers").profiles["standard"].sizes)
    edge = next(c for c in d["checks"] if c["prediction"] == "sqrtT_s2")
    by_s2 = {j["parameters"]["s2"]: j["sizes"] for j in edge["judged_sizes"]}
    # the edge check's domain is s2 <= 1/2 (the default s2 = log 2 is judged nowhere), from
    # t_decay(s2) on: every standard size at s2 = 1/4, from 181 at s2 = 1/2 (t_decay 169)
    assert by_s2[0.25] == sizes and by_s2[0.6931471805599453] == []
    assert by_s2[0.5] == [T for T in sizes if T >= 169] == sizes[1:]
    s1 = next(c for c in d["checks"] if c["prediction"] == "s1")
    assert all(j["sizes"] == sizes for j in s1["judged_sizes"])
    assert cli.main(["describe", "markov.outliers", "--profile", "standard", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["checks"][2]["judged_sizes"][2] == {"parameters": d["cases"][2], "sizes": []}
    assert out["paper_result"] == get_claim("markov.outliers").paper_result


def test_predict_json_gives_floats_and_exact_text(capsys):
    assert cli.main(["predict", "depth.stable_rank", "--set", "gamma=0.6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert isinstance(out["predictions"]["sr_Xperp_over_T"], float)
    exact = sp.sympify(out["exact"]["sr_Xperp_over_T"])
    assert abs(float(exact) - out["predictions"]["sr_Xperp_over_T"]) < 1e-15
    assert out["exact"]["sr_Xperp_over_T"] == "(-1735 + 145*sqrt(145))/64"


def test_variant_statements_use_named_functions():
    relu = get_claim("variants.relu").statement()[0].rhs
    sigmoid = get_claim("variants.sigmoid").statement()[0].rhs
    assert "Phi" in sp.sstr(relu) and "erf" not in sp.sstr(relu)
    assert sp.sstr(sigmoid) == "SigmoidMean(mu, s2)"


def test_rst_becomes_markdown():
    text = ("Row :math:`i` of ``A`` (see :func:`~theory.causal.f`), a ``long\n"
            "literal``:\n\n.. math::\n\n    x = 1\n\nafter")
    md = rst_to_markdown(text)
    assert md == "Row $i$ of `A` (see `theory.causal.f`), a `long\nliteral`:\n\n$$x = 1$$\nafter"
    docs = (__import__("pathlib").Path(__file__).resolve().parents[2] / "docs/claims.md").read_text()
    assert ":math:" not in docs and ":func:" not in docs and "``" not in docs
