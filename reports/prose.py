r"""The claim registry's plain-text notes as LaTeX, their ASCII math typeset as math.

The registry's notes are plain text with ASCII math (``T^2``, ``||A||_F^2``,
``sd ~ 1/T``, ``kappa``); :func:`prose` typesets that math in ``$...$`` and escapes the
rest (:func:`reports.latex.escape`), so no note prints ``T{\textasciicircum}2``; check
labels and claim ids are set in typewriter type.
"""
from __future__ import annotations

import re

from gapverify.reports.latex import _ALLOWED_MACROS, _MACRO, TeX, _balanced, escape

__all__ = ["prose"]


# ----------------------------------------------------------------------------- prose with math
#: Greek letters written out in the registry's plain-text notes (``kappa^2``).
_GREEK = frozenset("""
alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau
upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega
""".split())
_GREEK_TEX = {"phi": r"\varphi", "epsilon": r"\varepsilon"}
#: Function-like words of the notes and how they are typeset in math.
_MATH_WORDS = {
    "log": r"\log", "exp": r"\exp", "max": r"\max", "min": r"\min", "sup": r"\sup",
    "det": r"\det", "sum": r"\sum", "sqrt": r"\sqrt", "oo": r"\infty", "perp": r"^{\perp}",
    "tr": r"\operatorname{tr}", "sd": r"\operatorname{sd}", "var": r"\operatorname{var}",
    "cov": r"\operatorname{cov}", "corr": r"\operatorname{corr}", "eps": r"\varepsilon",
    "sr": r"\operatorname{sr}",
}
_OPERATORS = {"=": "=", "~": r"\sim", "<=": r"\le", ">=": r"\ge", "<": "<", ">": ">",
              "-": "-", "+": "+", "->": r"\to", "x": r"\times", "*": r"\cdot", "/": "/",
              "±": r"\pm"}
_RELATIONS = frozenset({"=", "~", "<=", ">=", "<", ">", "->"})
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e-?\d+)?(?:(?:\.\.|/)\d+(?:\.\d+)?)?")
#: function words that need an argument after them: never the last word of a math run
_PREFIX_WORDS = frozenset({"log", "exp", "max", "min", "sup", "det", "sum", "sqrt", "tr", "sd",
                           "var", "cov", "corr", "sr"})
_WORD = re.compile(r"[A-Za-z]+")


def _is_code(core: str) -> bool:
    # a check label, claim id or file (sr_X1, frob_Aperp_scaled, width.stable_rank,
    # tests/theory/test_causal.py): typewriter text, never math
    if re.search(r"[A-Za-z]\.[A-Za-z]", core):
        return True
    m = re.match(r"\(?([A-Za-z]{2,})_", core)
    return (bool(m) and m.group(1) not in _GREEK and m.group(1) not in ("sum", "max", "min", "sup")
            and not re.match(r"\(?[A-Za-z]perp_(?:\d+|[A-Za-z])(?![A-Za-z0-9_])", core))  # Aperp_1||_F^2


def _is_math(core: str) -> bool:
    if not core or _is_code(core):
        return False
    if any(s in core for s in ("^", "_", "|", "±", "<=", ">=")):
        return True
    if re.fullmatch(r"(?:sqrt|O)\(.*|[A-Za-z]=-?[\d.]+", core):
        return True
    if core in _GREEK or (len(core) == 1 and core.isalpha() and core != "a"):
        return True
    if re.fullmatch(r"[A-Za-z]\d+(?:perp)?(?:\(.*)?|[A-Za-z]perp", core):  # s1, X0, Aperp
        return True
    if re.fullmatch(r"[\d.]+/(?:[A-Za-z]|log|sqrt).*|[A-Za-z]/\d.*", core):  # 1/T, e/2
        return True
    return bool(re.fullmatch(r"[A-Za-z]+\([^()]*\)", core)) and core.split("(")[0] in _MATH_WORDS


def _joins(core: str) -> bool:
    # may sit inside a math run without starting one
    return (core in _OPERATORS or core in _MATH_WORDS or _NUMBER.fullmatch(core) is not None)


def _group(src: str, i: int) -> int:
    # index just past the parenthesis group opening at src[i], or -1 when unbalanced
    depth = 0
    for j in range(i, len(src)):
        depth += {"(": 1, ")": -1}.get(src[j], 0)
        if depth == 0:
            return j + 1
    return -1


def _ident(word: str, script: bool = False) -> str:
    if word in _GREEK:
        return _GREEK_TEX.get(word, "\\" + word)
    if word == "l":
        return r"\ell"
    if word in _MATH_WORDS and (not script or word in ("perp", "oo")):
        return _MATH_WORDS[word].replace("^{\\perp}", "\\perp") if script else _MATH_WORDS[word]
    m = re.fullmatch(r"([A-Za-z])perp", word)
    if m:
        return f"{m.group(1)}^{{\\perp}}"
    if len(word) > 1 and not script:
        return r"\mathrm{" + word + "}"
    return word


def _ascii_math(src: str, script: bool = False) -> str:
    """LaTeX math for a run of the registry's ASCII math (``||A||_F^2``, ``T^-2/3``,
    ``sqrt(log T / 4T)``, ``kappa^(2l)``, ``s_i^4/s_1^4``)."""
    out, i = [], 0
    while i < len(src):
        ch = src[i]
        if src.startswith("||", i):
            out.append(r"\|")
            i += 2
        elif src.startswith("sqrt(", i):
            end = _group(src, i + 4)
            if end < 0:
                out.append(r"\sqrt")
                i += 4
            else:
                out.append(r"\sqrt{" + _ascii_math(src[i + 5:end - 1]) + "}")
                i = end
        elif ch in "^_":
            rest = src[i + 1:]
            if rest.startswith("("):
                end = _group(src, i + 1)
                if end > 0:
                    out.append(ch + "{" + _ascii_math(src[i + 2:end - 1], script=True) + "}")
                    i = end
                    continue
            m = re.match(r"-?[A-Za-z0-9]+(?:\.\d+)?(?:/\d+)?", rest)
            if m is None:
                out.append(ch + "{}")
                i += 1
                continue
            body = m.group(0)
            if ch == "^" and body == "T":
                out.append(r"^{\top}")
            else:
                out.append(ch + "{" + _ascii_math(body, script=True) + "}")
            i += 1 + len(body)
        elif ch.isascii() and ch.isalpha():
            m = re.match(r"([A-Za-z])(\d+)(perp)?(?![A-Za-z])|[A-Za-z]+", src[i:])
            word = m.group(0)
            if word == "x" and src[i - 1:i] == " " and src[i + 1:i + 2] == " ":
                out.append(r"\times")
            elif m.group(2) and not script:  # s1 -> s_1, X1perp -> X_1^perp; s2 is s^2
                if word == "s2" and not re.search(r"\\sqrt\{T\}\s*$", "".join(out)):
                    out.append("s^{2}")
                else:
                    out.append(f"{m.group(1)}_{{{m.group(2)}}}" + (r"^{\perp}" if m.group(3) else ""))
            else:
                out.append(_ident(word, script) + (" " if word in _MATH_WORDS or word in _GREEK else ""))
            i += len(word)
        elif src.startswith("<=", i) or src.startswith(">=", i) or src.startswith("->", i):
            out.append(" " + _OPERATORS[src[i:i + 2]] + " ")
            i += 2
        elif ch in "~±*":
            out.append(" " + _OPERATORS[ch] + " ")
            i += 1
        elif ch in "%&#$":
            out.append("\\" + ch)
            i += 1
        elif ch in "{}":
            out.append("\\" + ch)
            i += 1
        elif ch == "\\":
            out.append(r"\backslash ")
            i += 1
        else:
            out.append(ch)
            i += 1
    text = re.sub(r"([A-Za-z])_\{hat\}", r"\\hat{\1}", "".join(out))  # L_hat -> \hat{L}
    return re.sub(r" {2,}", " ", text)


def _split_token(token: str) -> tuple[str, str, str]:
    # (leading punctuation, core, trailing punctuation); unbalanced brackets stay outside
    lead, core, trail = "", token, ""
    while True:
        if core[:1] in ("(", "[") and core.count(core[0]) > core.count(")" if core[0] == "(" else "]"):
            lead, core = lead + core[0], core[1:]
        elif core[-1:] in (",", ";", ":", ".", "'") and not _NUMBER.fullmatch(core):
            core, trail = core[:-1], core[-1] + trail
        elif core[-1:] in (")", "]") and core.count(core[-1]) > core.count("(" if core[-1] == ")" else "["):
            core, trail = core[:-1], core[-1] + trail
        else:
            return lead, core, trail


def prose(text: object) -> TeX:
    r"""A note of the claim registry (plain text with ASCII math) as LaTeX, its math typeset
    as math: ``sd ~ 1/T`` -> ``$\operatorname{sd} \sim 1/T$``, ``||A||_F^2`` ->
    ``$\|A\|_{F}^{2}$``, ``T^-2/3`` -> ``$T^{-2/3}$``, ``kappa`` -> ``$\kappa$``; check labels
    and claim ids (``sr_X1``, ``width.stable_rank``) in typewriter type; everything else is
    escaped text (:func:`escape`).

    Words are grouped into math runs: a run holds at least one math token (one with
    ``^``, ``_``, ``||``, ``±``, ``<=``, a Greek letter, a single letter other than "a", a
    fraction ``1/T``, ``s1``, ``Aperp``, ``sqrt(...)``, ``O(...)``) and the operators,
    numbers and function words (``log``, ``sd``, ``tr``) around it. A run whose LaTeX is
    not safe to compile with the table's packages falls back to escaped text.
    """
    if isinstance(text, TeX):
        return text
    # ASCII spellings of symbols: "+-" is a plus-minus, "chi2" the chi-square's chi^2
    text = re.sub(r"\s*\+-\s*", " ± ", str(text))
    text = re.sub(r"\bchi2(?=_|\b)", "chi^2", text)
    parts: list[tuple[str, str, str, str]] = []  # (lead, core, trail, space after)
    for token, space in _merged_tokens(str(text)):
        lead, core, trail = _split_token(token)
        parts.append((lead, core, trail, space))
    out: list[str] = []
    i = 0
    while i < len(parts):
        lead, core, trail, space = parts[i]
        if not _is_math(core) and not (_joins(core) and not trail and _run_end(parts, i) > i):
            out.append(_text_token(lead, core, trail, space))
            i += 1
            continue
        end = _run_end(parts, i)
        run = parts[i:end + 1]
        # operators may not end a run; numbers and function words may not start one unless a
        # math token follows
        while len(run) > 1 and (run[-1][1] in _OPERATORS or run[-1][1] in _PREFIX_WORDS):
            run.pop()
        if not any(_is_math(p[1]) for p in run):
            out.append(_text_token(lead, core, trail, space))
            i += 1
            continue
        src = " ".join(p[1] for p in run)
        math = _ascii_math(src)
        if _balanced(math) and set(_MACRO.findall(math)) <= _ALLOWED_MACROS | {"ell", "backslash"} \
                and all(ord(c) < 128 for c in math):
            out.append(escape(run[0][0]) + "$" + math.strip() + "$" + escape(run[-1][2])
                       + run[-1][3])
        else:
            out.append("".join(_text_token(*p) for p in run))
        i += len(run)
    return TeX("".join(out).rstrip() if str(text) == str(text).rstrip() else "".join(out))


def _merged_tokens(text: str) -> list[tuple[str, str]]:
    """Whitespace-separated tokens, those of one parenthesised math expression merged:
    a call ``sqrt(log T / 4T)`` or a group raised to a power ``(T d)^(-1/2)``."""
    tokens = [(m.group(1), m.group(2)) for m in re.finditer(r"(\S+)(\s*)", text)]
    out, i = [], 0
    while i < len(tokens):
        tok, space = tokens[i]
        opens = re.search(r"[A-Za-z0-9]\($", tok) or re.search(r"[A-Za-z0-9]\([^)]*$", tok)
        j, depth, merged = i, 0, ""
        if opens or tok.startswith("("):
            for j in range(i, min(i + 8, len(tokens))):
                merged += tokens[j][0] + (tokens[j][1] if j < i + 7 else "")
                depth = sum({"(": 1, ")": -1}.get(c, 0) for c in merged)
                if depth <= 0 or re.search(r"[;:]", tokens[j][0]):
                    break
            joined = "".join(t + (s if k < j else "") for k, (t, s) in enumerate(tokens[i:j + 1], i))
            close = _group(joined, 0) if joined.startswith("(") else -1
            powered = close > 0 and joined[close:close + 1] in ("^", "_")
            prose_words = [w for w in _WORD.findall(joined) if len(w) > 3 and w not in _GREEK
                           and w not in _MATH_WORDS]
            if (depth == 0 and j > i and (opens or powered) and not prose_words
                    and not re.search(r"[;:]", joined[:-1])):
                out.append((joined, tokens[j][1]))
                i = j + 1
                continue
        out.append((tok, space))
        i += 1
    return out


def _run_end(parts, i: int) -> int:
    # last index of the math run starting at i: consecutive math or joining tokens, broken
    # by punctuation between them
    end = i
    if parts[i][2]:
        return end
    while end + 1 < len(parts):
        lead, core, trail, _ = parts[end + 1]
        if lead or not (_is_math(core) or _joins(core)):
            break
        end += 1
        if trail:
            break
    return end


def _text_token(lead: str, core: str, trail: str, space: str) -> str:
    if _is_code(core) and "_" in core:
        while core.startswith("(") and core.endswith(")"):
            lead, core, trail = lead + "(", core[1:-1], ")" + trail
        return escape(lead) + r"\texttt{" + escape(core) + "}" + escape(trail) + space
    return escape(lead + core + trail) + space
