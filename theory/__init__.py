"""Theory: sympy/mpmath statements of the limiting laws and predictions (what is true).

Never imports ``numerics`` or ``verification``.
"""
from theory.laws import quarter_circle, quarter_circle_law, disc_modulus_law
from theory.parameters import PARAMETERS, Parameter, ParameterError
from theory.softmax import kappa, kappa_squared

__all__ = ["PARAMETERS", "Parameter", "ParameterError", "kappa", "kappa_squared",
           "quarter_circle", "quarter_circle_law", "disc_modulus_law"]
