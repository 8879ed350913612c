r"""The edge of :math:`\sqrt T A^\perp` at finite ``T``: largest entries as rank-one spikes.

:math:`A = D^{-1}Z`, :math:`Z_{ij} = e^{M_{ij}}`, :math:`M_{ij}` i.i.d. :math:`N(\mu, s^2)`,
:math:`\kappa^2 = e^{s^2}-1`, :math:`A^\perp = A - \mathbf 1\mathbf 1^\top/T`. An entry of
:math:`B = \sqrt T A^\perp` is :math:`b_{ij} = (Z_{ij}/m_i - 1)/\sqrt T` (:math:`m_i` the row
mean), of variance :math:`\approx\kappa^2/T`, so the singular values of ``B`` fill the
quarter circle :math:`Q_\kappa` with edge :math:`2\kappa` [1]_. At finite ``T`` the log-normal
tail makes the largest entry :math:`a_T = \max_{ij} b_{ij}` of order :math:`\kappa`.

1. **Entry law** (:func:`entry_sf`, :func:`order_statistic_sf`). With
   :math:`S_i = \sum_{k\ne j}Z_{ik}` the rest of the row,
   :math:`b = (TR/(1+R) - 1)/\sqrt T`, :math:`R = Z_{ij}/S_i`, exactly. ``S`` is replaced by
   the log-normal of its mean and variance (Fenton-Wilkinson):
   :math:`\log(S/m) \sim N(\log(T-1) - v/2, v)`, :math:`v = \log(1 + \kappa^2/(T-1))`, so
   :math:`\log R \sim N(-s^2/2 - \log(T-1) + v/2,\ s^2 + v)` and

   .. math:: P(b > x) = \bar\Phi\Big(\frac{\log\frac{y}{T-y} - m_R}{s_R}\Big),\qquad
             y = 1 + x\sqrt T.

   The ``T^2`` entries are taken independent: :math:`P(a_{(k)} > x) = P(\mathrm{Bin}(T^2,
   p(x)) \ge k)`. Errors: the entries of one row share :math:`S_i`, which changes the
   law of the row maximum by :math:`O((T p)^2)` against :math:`T p = O(1/T)` in the range
   that matters; the skewness of ``S`` (neglected by Fenton-Wilkinson) is
   :math:`O(T^{-1/2})` relative on a quantity of relative spread
   :math:`\kappa/\sqrt T`, an :math:`O(\kappa^2/T)` relative error on :math:`a_T`.
   ``row="mean"`` instead sets :math:`m_i = \mathbb E Z` (the plain maximum of ``T^2``
   i.i.d. log-normals, shifted and scaled): it drops the entry's own share of its row,
   :math:`Z_{ij}/T`, a relative error :math:`a/\sqrt T` (12% at ``T = 128``, ``a = 1.4``).
2. **Spike map** (:func:`spike_map_identities`). For an ``n x n`` matrix with limiting
   singular value law :math:`\mu` plus :math:`\theta uv^\top`, Benaych-Georges & Nadakuditi
   [2]_ (Thm 2.8) put the top singular value at the root ``z`` of
   :math:`D_\mu(z) = \theta^{-2}`, :math:`D_\mu(z) = \varphi(z)(c\varphi(z) + (1-c)/z)`,
   :math:`\varphi(z) = \int z/(z^2-t^2)\,d\mu(t)`, and at the edge when
   :math:`\theta^{-2} > D_\mu(\text{edge}^+)`. With aspect ratio ``c = 1`` and
   :math:`\mu = Q_\kappa`, :math:`\varphi` is the Stieltjes transform of the semicircle of
   radius :math:`2\kappa` (the symmetrised :math:`Q_\kappa`), :math:`\kappa^2\varphi^2 - z\varphi
   + 1 = 0`, so :math:`\varphi(z) = 1/a` gives

   .. math:: s_1 \to a + \kappa^2/a\quad (a > \kappa),\qquad 2\kappa\quad (a\le\kappa).

   [2]_ takes ``u, v`` independent of an invariant bulk; an entry spike has
   :math:`u = e_i, v = e_j`, covered through the isotropic local law for i.i.d. matrices
   with all moments [3]_, which makes :math:`\langle e_i, G e_j\rangle` concentrate on the
   same Stieltjes transform. Large entries in distinct rows and columns form a
   perturbation with orthonormal singular vectors: each is its own spike, and the
   ``k``-th singular value follows the ``k``-th largest entry.
3. **Finite-size model** (:func:`edge_mean`): :math:`\mathbb E\sqrt T s_k(A^\perp) \approx
   \mathbb E\max(e_T, \mathrm{spike}(a_{(k)}))`, with the bulk edge
   :math:`e_T = 2\kappa + \kappa 2^{-2/3}\zeta_1 T^{-2/3}` (the Tracy-Widom mean of the
   largest singular value of a square real Gaussian matrix, Johnstone [4]_; :math:`\zeta_1 =
   \mathbb E\,\mathrm{TW}_1`, Bornemann [5]_), by quadrature over the law of item 1.
4. **Domain** (:func:`t_min`, :func:`bulk_edge_sizes`): the smallest ``T`` from which the
   spike excess :math:`(\mathbb E\max(2\kappa, \mathrm{spike}(a_T)) - 2\kappa)/2\kappa`
   stays below a threshold (default 1%, a third of the 3% power target).

References
----------
.. [1] C. Bordenave, P. Caputo, D. Chafai, PTRF 152 (2012), arXiv:0808.1502.
.. [2] F. Benaych-Georges, R. R. Nadakuditi, "The singular values and vectors of low rank
   perturbations of large rectangular random matrices", J. Multivariate Anal. 111 (2012),
   arXiv:1103.2221.
.. [3] A. Knowles, J. Yin, "Anisotropic local laws for random matrices", PTRF 169 (2017),
   arXiv:1410.3516.
.. [4] I. M. Johnstone, "On the distribution of the largest eigenvalue in principal
   components analysis", Ann. Statist. 29 (2001).
.. [5] F. Bornemann, "On the numerical evaluation of distributions in random matrix
   theory", Markov Process. Related Fields 16 (2010), arXiv:0904.1581.
"""
from __future__ import annotations

import math
from functools import cache

import mpmath
import numpy as np
import sympy as sp

from gapverify.theory.edge_offset import TW1_MEAN, tracy_widom_offset

__all__ = ["spike", "spike_map", "spike_map_identities", "entry_sf", "order_statistic_sf",
           "tail_of_max",
           "max_entry_mean", "bulk_edge", "edge_mean", "edge_sd", "spike_excess", "t_min", "t_decay",
           "bulk_edge_sizes", "first_size_below", "TW1_MEAN", "DEFAULT_THRESHOLD"]

#: a third of the 3% power target of the standard, large and gpu profiles
DEFAULT_THRESHOLD = 0.01
_TINY = 1e-16  # tail mass left out of a quadrature


def _kappa(s2: float) -> float:
    if not (isinstance(s2, (int, float)) and 0 < s2 <= 700):
        raise ValueError(f"parameter 's2' must be a number in (0, 700], got {s2!r}")
    return math.sqrt(math.expm1(s2))  # kappa^2 = e^{s2} - 1


def _check_T(T: float) -> float:
    if not (isinstance(T, (int, float)) and T >= 4):
        raise ValueError(f"parameter 'T' must be a number >= 4, got {T!r}")
    return float(T)


# --- 2. the spike map ----------------------------------------------------------------------

def spike_map() -> tuple[sp.Symbol, sp.Symbol, sp.Expr]:
    r"""``(a, kappa, a + kappa^2/a)``: the outlier of a strength-``a`` spike above ``kappa``,
    derived from the D-transform at ``c = 1`` (module docstring, item 2)."""
    a, k, z, phi = sp.symbols("a kappa z varphi", positive=True)
    # c = 1: D(z) = varphi(z)^2 = a^-2  <=>  varphi = 1/a; varphi solves k^2 phi^2 - z phi + 1 = 0
    root = sp.solve(sp.Eq(k**2 * phi**2 - z * phi + 1, 0).subs(phi, 1 / a), z)
    if len(root) != 1:
        raise AssertionError(f"the spike equation should have one root in z, got {root}")
    return a, k, sp.simplify(root[0])


@cache
def spike_map_identities() -> dict[str, bool]:
    r"""Prove the spike map's properties in sympy:

    * ``stieltjes``: :math:`\varphi(z) = (z - \sqrt{z^2-4\kappa^2})/(2\kappa^2)` solves
      :math:`\kappa^2\varphi^2 - z\varphi + 1 = 0` and equals
      :math:`\int_0^{2\kappa} z/(z^2-t^2)\,q_\kappa(t)dt` of the quarter-circle density
      (checked by quadrature at ``kappa = 1, z = 3`` to 1e-12);
    * ``branch``: :math:`\varphi(a + \kappa^2/a) = 1/a` for :math:`a > \kappa` (the root is
      on the physical branch), and :math:`= a/\kappa^2 \ne 1/a` for :math:`a < \kappa`
      (no outlier below the threshold);
    * ``threshold``: the map equals :math:`2\kappa` at :math:`a = \kappa`;
    * ``increasing``: its derivative :math:`1 - \kappa^2/a^2` is positive for :math:`a > \kappa`,
      so it exceeds :math:`2\kappa` above the threshold (:math:`(a-\kappa)^2/a > 0`).
    """
    from gapverify.theory.laws import KAPPA, quarter_circle_law, x as xq

    a, k, s = spike_map()
    z = sp.Symbol("z", positive=True)
    phi = (z - sp.sqrt(z**2 - 4 * k**2)) / (2 * k**2)
    solves = sp.simplify(k**2 * phi**2 - z * phi + 1) == 0
    q = sp.lambdify(xq, quarter_circle_law().density.subs(KAPPA, 1), "mpmath")
    integral = mpmath.quad(lambda u: 3 / (9 - u**2) * q(u), [0, 2])
    matches = abs(float(integral) - float(phi.subs({k: 1, z: 3}))) < 1e-12
    u = sp.Symbol("u", positive=True)  # a = kappa (1 + u) above, kappa / (1 + u) below

    def phi_at(a_value):  # varphi(spike(a)), square roots of perfect squares factored
        e = phi.subs(z, s).subs(a, a_value)
        return sp.simplify(e.replace(lambda w: w.is_Pow and w.exp == sp.Rational(1, 2),
                                     lambda w: sp.sqrt(sp.factor(w.base))))
    above = sp.simplify(phi_at(k * (1 + u)) - 1 / (k * (1 + u))) == 0
    below_a = k / (1 + u)
    below = (sp.simplify(phi_at(below_a) - below_a / k**2) == 0
             and sp.simplify(below_a / k**2 - 1 / below_a) != 0)
    return {
        "stieltjes": bool(solves and matches),
        "branch": bool(above and below),
        "threshold": sp.simplify(s.subs(a, k) - 2 * k) == 0,
        "increasing": sp.simplify(sp.diff(s, a) - (1 - k**2 / a**2)) == 0
        and sp.simplify(s - 2 * k - (a - k)**2 / a) == 0,
    }


def spike(a, kappa: float):
    r""":math:`a + \kappa^2/a` for :math:`a > \kappa`, else :math:`2\kappa` (vectorised)."""
    a = np.asarray(a, dtype=float)
    return np.where(a > kappa, a + kappa**2 / np.maximum(a, kappa), 2.0 * kappa)


# --- 1. the law of the largest entries ------------------------------------------------------

def _log_ratio_law(s2: float, T: float, row: str) -> tuple[float, float]:
    """Mean and sd of log R (row='self') or of log(Z/m) (row='mean')."""
    k2 = math.expm1(s2)
    if row == "mean":
        return -s2 / 2, math.sqrt(s2)  # log(Z/m) ~ N(-s2/2, s2), free of mu
    if row != "self":
        raise ValueError(f"parameter 'row' must be 'self' or 'mean', got {row!r}")
    v = math.log1p(k2 / (T - 1))  # Fenton-Wilkinson variance of log(S/m)
    return -s2 / 2 - math.log(T - 1) + v / 2, math.sqrt(s2 + v)


def _z_of(x, s2: float, T: float, row: str):
    """The standardised log-threshold of ``b > x``; +inf where ``b`` cannot exceed ``x``."""
    m, sd = _log_ratio_law(s2, T, row)
    y = 1.0 + np.asarray(x, dtype=float) * math.sqrt(T)  # T R/(1+R) > y
    with np.errstate(divide="ignore", invalid="ignore"):
        if row == "mean":
            lr = np.where(y > 0, np.log(np.maximum(y, 1e-300)), -np.inf)
        else:
            lr = np.where(y >= T, np.inf, np.log(np.maximum(y, 1e-300)) - np.log(np.maximum(T - y, 1e-300)))
            lr = np.where(y <= 0, -np.inf, lr)
    return (lr - m) / sd


def entry_sf(x, s2: float, T: float, row: str = "self"):
    r""":math:`P(b > x)` for one entry of :math:`\sqrt T A^\perp` (module docstring, item 1)."""
    from scipy import special

    _kappa(s2)
    return special.ndtr(-_z_of(x, s2, _check_T(T), row))


def order_statistic_sf(x, s2: float, T: float, k: int = 1, row: str = "self"):
    r""":math:`P(a_{(k)} > x) = P(\mathrm{Bin}(T^2, p(x)) \ge k)`, ``a_(k)`` the ``k``-th
    largest of the ``T^2`` entries taken independent."""
    if not (isinstance(k, int) and k >= 1):
        raise ValueError(f"parameter 'k' must be an integer >= 1, got {k!r}")
    p = entry_sf(x, s2, T, row)
    N = float(T) ** 2
    if k == 1:
        return -np.expm1(N * np.log1p(-np.minimum(p, 1 - 1e-16)))  # 1 - (1 - p)^N
    from scipy import stats

    return stats.binom.sf(k - 1, int(round(N)), p)


def tail_of_max(s2: float, T: float, row: str = "self"):
    r"""The scalar function :math:`x \mapsto P(a_T > x) = 1 - (1 - p(x))^{T^2}` (``k = 1``
    of :func:`order_statistic_sf`), for the quadratures below: the law's constants worked
    out once and plain ``math`` per point (a quadrature calls it about 10^2 times, and
    numpy's per-call overhead on a scalar was most of the domain floors' cost)."""
    m, sd = _log_ratio_law(s2, _check_T(T), row)
    root_T, N, top = math.sqrt(T), float(T) ** 2, 1.0 - 1e-16

    def sf(x: float) -> float:
        y = 1.0 + x * root_T  # T R/(1+R) > y
        if y <= 0.0:
            return 1.0  # b > x always: p = 1
        if row == "self":
            if y >= T:
                return 0.0  # b cannot exceed x: p = 0
            lr = math.log(y) - math.log(T - y)
        else:
            lr = math.log(y)
        p = 0.5 * math.erfc((lr - m) / sd / math.sqrt(2.0))  # Phi-bar(z)
        return -math.expm1(N * math.log1p(-min(p, top)))  # 1 - (1 - p)^N

    return sf


def _tail_of_order_statistic(s2: float, T: float, k: int, row: str):
    """The scalar ``x -> P(a_(k) > x)``: :func:`tail_of_max` at ``k = 1``, else
    :func:`order_statistic_sf` (a binomial tail) point by point."""
    if k == 1:
        return tail_of_max(s2, T, row)
    return lambda x: float(order_statistic_sf(x, s2, T, k, row))


def _x_at(s2: float, T: float, p: float, row: str) -> float:
    """The ``x`` with ``P(b > x) = p`` (inverse of :func:`entry_sf`)."""
    from scipy import special

    m, sd = _log_ratio_law(s2, T, row)
    lr = m + sd * float(-special.ndtri(p))
    y = math.exp(lr) if row == "mean" else T / (1.0 + math.exp(-lr))  # R = y/(T-y)
    return (y - 1.0) / math.sqrt(T)


def _range(s2: float, T: float, k: int, row: str) -> tuple[float, float]:
    """``[lo, hi]`` outside which ``a_(k)`` lies with probability below ``_TINY``."""
    N = float(T) ** 2
    lo = _x_at(s2, T, min(0.5, (40.0 + 4 * k) / N), row)
    hi = _x_at(s2, T, _TINY / N, row)
    return lo, hi


def max_entry_mean(s2: float, T: float, k: int = 1, row: str = "self") -> float:
    r""":math:`\mathbb E a_{(k)} = lo + \int_{lo}^{hi} P(a_{(k)} > x)dx` (mass outside
    ``[lo, hi]`` below 1e-16)."""
    from scipy import integrate

    lo, hi = _range(s2, T, k, row)
    sf = _tail_of_order_statistic(s2, T, k, row)
    val, _ = integrate.quad(sf, lo, hi, limit=200, epsabs=1e-12)
    return lo + val


# --- 3. the finite-size edge --------------------------------------------------------------

def bulk_edge(s2: float, T: float) -> float:
    r""":math:`e_T = \kappa(2 + 2^{-2/3}\zeta_1 T^{-2/3})`: :math:`\lambda_{\max}(XX^\top)
    \approx 4 + 2^{4/3}T^{-2/3}\mathrm{TW}_1` for a square real matrix of variance-``1/T``
    entries [4]_, and :math:`s_1 = \sqrt\lambda \approx 2 + (\lambda - 4)/4`."""
    k = _kappa(s2)
    return 2.0 * k + float(tracy_widom_offset(k, _check_T(T)))  # theory.edge_offset


def edge_mean(s2: float, T: float, k: int = 1, bulk: bool = True, row: str = "self") -> float:
    r""":math:`\mathbb E\max(e_T, \mathrm{spike}(a_{(k)}))` (``bulk=False``: :math:`e_T =
    2\kappa`). Since the spike map is :math:`\ge 2\kappa \ge e_T` above :math:`\kappa`,

    .. math:: e_T + (2\kappa - e_T)P(a_{(k)} > \kappa)
              + \int_\kappa^\infty (1 - \kappa^2/x^2) P(a_{(k)} > x)\,dx.
    """
    from scipy import integrate

    kap = _kappa(s2)
    e = bulk_edge(s2, T) if bulk else 2.0 * kap
    _, hi = _range(s2, T, k, row)
    if hi <= kap:
        return e
    sf = _tail_of_order_statistic(s2, T, k, row)
    val, _ = integrate.quad(lambda x: (1.0 - kap**2 / x**2) * sf(x), kap, hi, limit=200,
                            epsabs=1e-12)
    return e + (2.0 * kap - e) * sf(kap) + val


def edge_sd(s2: float, T: float, bulk: bool = True, row: str = "self") -> float:
    r"""The spike model's standard deviation of :math:`\sqrt T s_1(A^\perp)` across draws,
    from :math:`\mathbb E g^2 = e_T^2 + (4\kappa^2 - e_T^2)P(a_T > \kappa) +
    \int_\kappa^\infty 2g(x)g'(x)P(a_T > x)dx`, :math:`g` the spike map; the bulk's own
    Tracy-Widom spread (:math:`\kappa 2^{-2/3}T^{-2/3}` times the sd 1.27 of TW_1) is left
    out, so this is a lower bound where no spike is out."""
    from scipy import integrate

    kap = _kappa(s2)
    e = bulk_edge(s2, T) if bulk else 2.0 * kap
    mean = edge_mean(s2, T, 1, bulk, row)
    _, hi = _range(s2, T, 1, row)
    if hi <= kap:
        return 0.0
    sf = tail_of_max(s2, T, row)
    val, _ = integrate.quad(lambda x: 2.0 * (x + kap**2 / x) * (1.0 - kap**2 / x**2) * sf(x),
                            kap, hi, limit=200, epsabs=1e-12)
    second = e**2 + (4.0 * kap**2 - e**2) * sf(kap) + val
    return math.sqrt(max(second - mean**2, 0.0))


def spike_excess(s2: float, T: float, row: str = "self") -> float:
    r"""Relative excess :math:`(\mathbb E\max(2\kappa, \mathrm{spike}(a_T)) - 2\kappa)/2\kappa`."""
    return edge_mean(s2, T, 1, bulk=False, row=row) / (2.0 * _kappa(s2)) - 1.0


# --- 4. the domain --------------------------------------------------------------------------

def t_min(s2: float, threshold: float = DEFAULT_THRESHOLD, power: int = 1,
          criterion: str = "excess") -> int:
    r"""The smallest integer ``T`` (``>= 16``) from which the spike excess ``e`` keeps
    :math:`(1 + e)^{\mathrm{power}} - 1 \le` ``threshold`` at every larger ``T`` (``power=1``:
    :math:`\sqrt T s_1(A^\perp)`, :math:`\sqrt T s_2(A)`; ``power=2``:
    :math:`\mathrm{sr}(A^\perp)/T \propto s_1^{-2}`). ``criterion="probability"``: the
    smallest ``T`` with :math:`P(a_T > \kappa) \le` ``threshold`` instead.

    Found by :func:`first_size_below`.
    """
    kap = _kappa(s2)
    if not (isinstance(threshold, (int, float)) and 0 < threshold < 1):
        raise ValueError(f"parameter 'threshold' must be in (0, 1), got {threshold!r}")
    if power not in (1, 2):
        raise ValueError(f"parameter 'power' must be 1 or 2, got {power!r}")
    if criterion == "excess":
        def over(T):
            return (1.0 + spike_excess(s2, T)) ** power - 1.0 - threshold
    elif criterion == "probability":
        def over(T):
            return tail_of_max(s2, T)(kap) - threshold
    else:
        raise ValueError(f"parameter 'criterion' must be 'excess' or 'probability', got {criterion!r}")
    return first_size_below(over, f"the spike excess stays above {threshold} up to T = 2^40 "
                                  f"at s2 = {s2}")


def t_decay(s2: float, rate: float = 2.0 / 3.0, negligible: float = DEFAULT_THRESHOLD / 10) -> int:
    r"""The smallest integer ``T`` (``>= 16``) from which the spike excess ``e`` decays at
    least like :math:`T^{-\mathrm{rate}}` (local exponent
    :math:`-\mathrm d\log e/\mathrm d\log T \ge` ``rate``) or stays below ``negligible``, at
    every larger ``T``: where a fit :math:`L + c\,T^{-r}`, :math:`r \ge` ``rate``, can take
    up the excess as part of its :math:`c\,T^{-r}`. Below it the excess is flat or rising
    (at ``s2 = 1/2`` it peaks at 5.0% near ``T = 45``), a shape no such fit follows: the
    sizes a light-tailed edge is judged from: 16 at ``s2 <= 0.1``, 31 at ``s2 = 1/4``, 61 at
    ``s2 = 0.35``, 169 at ``s2 = 1/2``."""
    if not (isinstance(rate, (int, float)) and rate > 0):
        raise ValueError(f"parameter 'rate' must be positive, got {rate!r}")
    step = 2.0 ** (1.0 / 16.0)

    def over(T):
        e = spike_excess(s2, T)
        if e <= negligible:
            return -1.0
        after = spike_excess(s2, T * step)
        local = -math.log(after / e) / math.log(step) if after > 0 else math.inf
        return rate - local

    return first_size_below(over, f"the spike excess decays slower than T^-{rate:g} up to "
                                  f"T = 2^40 at s2 = {s2}")


def first_size_below(over, why: str) -> int:
    r"""The smallest integer ``T >= 16`` from which ``over(T) <= 0`` at every larger ``T``:
    scanned on a grid of ratio :math:`2^{1/8}` from 16 to :math:`2^{40}` for the last ``T``
    with ``over(T) > 0``, then bisected in :math:`\log T`. ``why``: the error's text when
    ``over`` stays positive to :math:`2^{40}` (raised as a ``ValueError`` on ``'s2'``)."""
    grid = 16.0 * 2.0 ** (np.arange(0, 8 * 36 + 1) / 8)
    above = [T for T in grid if over(T) > 0]
    if not above:
        return 16
    lo = max(above)
    if lo == grid[-1]:
        raise ValueError(f"parameter 's2': {why}")
    hi = lo * 2.0 ** 0.125
    for _ in range(40):  # bisection in log T
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if over(mid) > 0 else (lo, mid)
    return int(math.ceil(hi))


def bulk_edge_sizes(s2: float, sizes, threshold: float = DEFAULT_THRESHOLD,
                    power: int = 1) -> tuple[int, ...]:
    """The sizes ``T >= t_min(s2, threshold, power)``, where the bulk-edge model
    ``L + c T^-r`` applies."""
    tm = t_min(s2, threshold, power)
    return tuple(int(T) for T in sizes if T >= tm)
