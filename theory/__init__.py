"""Theory: sympy/mpmath statements of the limiting laws and predictions (what is true).

Never imports ``numerics`` or ``verification``. The names below are imported on first use
(PEP 562), so a submodule such as :mod:`gapverify.theory.parameters` loads without the
laws (scipy.stats).
"""
import importlib

_EXPORTS = {
    "PARAMETERS": "parameters", "Parameter": "parameters", "ParameterError": "parameters",
    "kappa": "softmax", "kappa_squared": "softmax",
    "quarter_circle": "laws", "quarter_circle_law": "laws", "disc_modulus_law": "laws",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
