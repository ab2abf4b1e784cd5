"""The 1PL–4PL item response functions, their log-likelihood, gradients and information.

Parameterisation (DESIGN.md), no 1.702 scaling constant:

    P_i(θ) = c + (d − c) / (1 + exp(−a (θ − b)))
    I_i(θ) = a² (P − c)² (d − P)² / ((d − c)² P (1 − P))

Every function is vectorised: ``theta`` has shape (T,), parameters shape (J,), results
(T, J). Log probabilities are computed without forming P first, so that an item far from
the examinee gives a finite log-likelihood instead of log(0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal, Protocol

import numpy as np

from irt.errors import ParamsError
from irt.estimation.arrays import is_numpy, namespace
from irt.families.coordinates import log_sigmoid, sigmoid
from irt.fit.persons import lz
from irt.names import ModelKind as ModelKind
from irt.parameter_set import BinaryItems, bernoulli_probabilities, item_positions, one_theta
from irt.types import FloatArray

#: Probabilities are kept this far from 0 and 1 wherever they are divided by.
PROB_EPS = 1e-12


def _as_float_vector(name: str, values: object, n: int | None) -> FloatArray:
    arr = np.ascontiguousarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ParamsError(f"item parameter {name!r} must be one-dimensional, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ParamsError(f"item parameter {name!r} has {arr.shape[0]} values for {n} items")
    if not np.all(np.isfinite(arr)):
        raise ParamsError(f"item parameter {name!r} has non-finite values")
    return arr


@dataclass(frozen=True)
class ItemParams(BinaryItems):
    """Parameters of J items, by name: ``params.a``, ``params.b``, ``params.c``, ``params.d``.

    Standard errors are optional (NaN where not estimated, e.g. ``se_c`` of a 2PL item).
    A ``irt.ParameterSet``: its methods are the free functions of this module.
    """

    family: ClassVar[Literal["binary"]] = "binary"
    scored: ClassVar[Literal[False]] = False
    n_dimensions: ClassVar[int] = 1

    item_ids: tuple[str, ...]
    a: FloatArray
    b: FloatArray
    c: FloatArray
    d: FloatArray
    model: ModelKind = ModelKind.THREE_PL
    se_a: FloatArray | None = field(default=None, compare=False)
    se_b: FloatArray | None = field(default=None, compare=False)
    se_c: FloatArray | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        n = len(self.item_ids)
        if len(set(self.item_ids)) != n:
            raise ParamsError("item ids are not unique")
        object.__setattr__(self, "model", ModelKind(self.model))
        for name in ("a", "b", "c", "d"):
            object.__setattr__(self, name, _as_float_vector(name, getattr(self, name), n))
        for name in ("se_a", "se_b", "se_c"):
            value = getattr(self, name)
            if value is not None:
                arr = np.ascontiguousarray(value, dtype=np.float64)
                if arr.shape != (n,):
                    raise ParamsError(f"{name} has shape {arr.shape}, expected ({n},)")
                object.__setattr__(self, name, arr)
        if np.any(self.c < 0) or np.any(self.d > 1) or np.any(self.c >= self.d):
            raise ParamsError("item parameters need 0 <= c < d <= 1 for every item")

    @classmethod
    def create(
        cls,
        a: object,
        b: object,
        c: object | None = None,
        d: object | None = None,
        *,
        item_ids: tuple[str, ...] | list[str] | None = None,
        model: ModelKind | str = ModelKind.THREE_PL,
    ) -> ItemParams:
        """Build parameters from arrays, filling ``c`` = 0, ``d`` = 1 and ids ``i0000``…"""
        a_arr = np.atleast_1d(np.asarray(a, dtype=np.float64))
        n = a_arr.shape[0]
        ids = tuple(item_ids) if item_ids is not None else tuple(f"i{j:04d}" for j in range(n))
        return cls(
            item_ids=ids,
            a=a_arr,
            b=np.atleast_1d(np.asarray(b, dtype=np.float64)),
            c=np.zeros(n) if c is None else np.atleast_1d(np.asarray(c, dtype=np.float64)),
            d=np.ones(n) if d is None else np.atleast_1d(np.asarray(d, dtype=np.float64)),
            model=ModelKind(model),
        )

    @property
    def item_types(self) -> tuple[ModelKind, ...]:
        """The model of each item (all alike), (J,)."""
        return (self.model,) * self.n_items

    def probabilities(self, theta: object) -> FloatArray:
        """(P(wrong), P(right)), shape (T, J, 2)."""
        return bernoulli_probabilities(probability(theta, self))

    def expected_score(self, theta: object) -> FloatArray:
        """P(right), shape (T, J)."""
        return probability(theta, self)

    def variance(self, theta: object) -> FloatArray:
        """P (1 − P), shape (T, J)."""
        p = probability(theta, self)
        return np.asarray(p * (1.0 - p))

    def information(self, theta: object) -> FloatArray:
        """Item Fisher information, shape (T, J) (``information``)."""
        return information(theta, self)

    def test_information(self, theta: object) -> FloatArray:
        return test_information(theta, self)

    def log_likelihood(self, theta: object, responses: object) -> FloatArray:
        """``log_likelihood(responses, theta, self)``, shape (T,)."""
        return log_likelihood(responses, theta, self)

    def draw(self, theta: object, items: object, rng: np.random.Generator) -> FloatArray:
        """A 0/1 answer per (θ_n, item_n) pair, (N,)."""
        pos = np.asarray(items, dtype=np.int_)
        z = self.a[pos] * (np.asarray(theta, dtype=np.float64) - self.b[pos])
        prob = self.c[pos] + (self.d[pos] - self.c[pos]) / (1 + np.exp(-z))
        return np.asarray(rng.random(pos.size) < prob, dtype=np.float64)

    def person_fit(self, theta: object, items: object, responses: object) -> float:
        """``irt.fit.persons.lz`` of the answers to the items at ``items``."""
        return lz(np.asarray(responses, dtype=np.float64), one_theta(theta), self.subset(items))

    def subset(self, items: object) -> ItemParams:
        """The items selected by ids or a numpy index (mask or positions)."""
        idx = item_positions(self.item_ids, items)

        def pick(values: FloatArray | None) -> FloatArray | None:
            return None if values is None else values[idx]

        return ItemParams(
            item_ids=tuple(self.item_ids[k] for k in idx),
            a=self.a[idx],
            b=self.b[idx],
            c=self.c[idx],
            d=self.d[idx],
            model=self.model,
            se_a=pick(self.se_a),
            se_b=pick(self.se_b),
            se_c=pick(self.se_c),
        )


def _theta_column(theta: object) -> FloatArray:
    if not is_numpy(theta) and not isinstance(theta, list | tuple):
        return theta.reshape(-1, 1)  # type: ignore[attr-defined,no-any-return]
    return np.asarray(theta, dtype=np.float64).reshape(-1, 1)


class LogisticItems(Protocol):
    """Items' a, b, c, d as arrays, numpy (``ItemParams``) or torch (``ItemArrays``):
    what the θ-side functions below read."""

    @property
    def a(self) -> FloatArray: ...

    @property
    def b(self) -> FloatArray: ...

    @property
    def c(self) -> FloatArray: ...

    @property
    def d(self) -> FloatArray: ...


@dataclass(frozen=True)
class ItemArrays:
    """a, b, c, d of J items as arrays of any backend (``irt.estimation.arrays``)."""

    a: FloatArray
    b: FloatArray
    c: FloatArray
    d: FloatArray


def logits(theta: object, params: LogisticItems) -> FloatArray:
    """z = a (θ − b), shape (T, J)."""
    return params.a * (_theta_column(theta) - params.b)


def probability(theta: object, params: ItemParams) -> FloatArray:
    """P(correct), shape (T, J)."""
    sig = _sigmoid(logits(theta, params))
    return params.c + (params.d - params.c) * sig


def _sigmoid(z: FloatArray) -> FloatArray:
    # Split by sign so that exp never overflows.
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    ez = np.exp(z[~pos])
    out[~pos] = ez / (1.0 + ez)
    return out


def log_prob_pair(
    z: FloatArray, c: FloatArray, d: FloatArray, sig: FloatArray | None = None
) -> tuple[FloatArray, FloatArray]:
    """(log P, log(1 − P)) from logits z and asymptotes c, d (broadcast over z's last axis).

    Where an asymptote is 0 (or 1) the logarithm goes through log σ(±z), which stays
    finite however far the item is from the examinee; where it is inside (0, 1), P (or
    1 − P) is bounded away from 0 and the direct logarithm is exact enough and faster.
    numpy or torch arrays (all three alike; ``irt.estimation.arrays``). ``sig``: σ(z),
    where the caller has it already.
    """
    if is_numpy(z):
        c = np.asarray(c, dtype=np.float64)
        d = np.asarray(d, dtype=np.float64)
    xp = namespace(z)
    span = d - c
    if bool(xp.all(c == 0)):
        log_p = xp.log(span) + log_sigmoid(z)
    elif bool(xp.all(c > 0)):
        sig = sigmoid(z) if sig is None else sig
        log_p = xp.log(c + span * sig)
    else:
        with np.errstate(divide="ignore"):
            log_p = xp.logaddexp(xp.log(c), xp.log(span) + log_sigmoid(z))
    if bool(xp.all(d == 1)):
        log_q = xp.log(span) + log_sigmoid(-z)
    elif bool(xp.all(d < 1)):
        sig = sigmoid(z) if sig is None else sig
        log_q = xp.log((1.0 - d) + span * (1.0 - sig))
    else:
        with np.errstate(divide="ignore"):
            log_q = xp.logaddexp(xp.log(1.0 - d), xp.log(span) + log_sigmoid(-z))
    return log_p, log_q


def log_probabilities(theta: object, params: LogisticItems) -> tuple[FloatArray, FloatArray]:
    """(log P, log(1 − P)), each shape (T, J), finite wherever the model allows."""
    return log_prob_pair(logits(theta, params), params.c, params.d)


def _split(responses: object) -> tuple[FloatArray, FloatArray]:
    """Responses with NaN for missing -> (y with 0 for missing, 0/1 mask)."""
    y = np.atleast_2d(np.asarray(responses, dtype=np.float64))
    mask = np.isfinite(y)
    return np.where(mask, y, 0.0), mask.astype(np.float64)


def log_likelihood(responses: object, theta: object, params: ItemParams) -> FloatArray:
    """Log-likelihood of each row of ``responses`` (T, J; NaN = missing) at its own θ (T,)."""
    y, mask = _split(responses)
    log_p, log_q = log_probabilities(theta, params)
    terms = y * log_p + (mask - y) * log_q
    return np.asarray(terms.sum(axis=1), dtype=np.float64)


def dprob_dtheta(theta: object, params: ItemParams) -> FloatArray:
    """∂P/∂θ = a (d − c) σ (1 − σ), shape (T, J)."""
    sig = _sigmoid(logits(theta, params))
    return params.a * (params.d - params.c) * sig * (1.0 - sig)


def theta_derivatives(
    theta: object, params: LogisticItems
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """P (kept inside (0, 1)), ∂P/∂θ and ∂²P/∂θ², each shape (T, J)."""
    z = logits(theta, params)
    return logit_derivatives(z, sigmoid(z), params)


def logit_derivatives(
    z: FloatArray, s: FloatArray, params: LogisticItems
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``theta_derivatives`` from the logits z and σ(z) = ``s``, where they are at hand."""
    xp = namespace(z)
    span = params.d - params.c
    p = xp.clip(params.c + span * s, PROB_EPS, 1 - PROB_EPS)
    ds = params.a * s * (1 - s)
    return p, span * ds, span * params.a * ds * (1 - 2 * s)


def information(theta: object, params: ItemParams) -> FloatArray:
    """Item Fisher information I_i(θ), shape (T, J)."""
    p = np.clip(probability(theta, params), PROB_EPS, 1.0 - PROB_EPS)
    dp = dprob_dtheta(theta, params)
    return np.asarray(dp * dp / (p * (1.0 - p)), dtype=np.float64)


def test_information(theta: object, params: ItemParams) -> FloatArray:
    """Test information Σ_i I_i(θ), shape (T,)."""
    return np.asarray(information(theta, params).sum(axis=1), dtype=np.float64)


def theta_score(responses: object, theta: object, params: ItemParams) -> FloatArray:
    """∂ log L / ∂θ for each row of ``responses`` at its θ, shape (T,)."""
    y, mask = _split(responses)
    p = np.clip(probability(theta, params), PROB_EPS, 1.0 - PROB_EPS)
    dp = dprob_dtheta(theta, params)
    return np.asarray(((y - mask * p) * dp / (p * (1.0 - p))).sum(axis=1), dtype=np.float64)


def item_gradient(responses: object, theta: object, params: ItemParams) -> FloatArray:
    """∂ log L / ∂(a, b, c, d) for each item, summed over the rows; shape (J, 4).

    Row t of ``responses`` is an examinee with ability ``theta[t]``.
    """
    y, mask = _split(responses)
    th = _theta_column(theta)
    sig = _sigmoid(params.a * (th - params.b))
    p = np.clip(params.c + (params.d - params.c) * sig, PROB_EPS, 1.0 - PROB_EPS)
    resid = (y - mask * p) / (p * (1.0 - p))
    dz = (params.d - params.c) * sig * (1.0 - sig)
    grads = np.stack(
        [
            (resid * dz * (th - params.b)).sum(axis=0),
            (resid * dz * -params.a).sum(axis=0),
            (resid * (1.0 - sig)).sum(axis=0),
            (resid * sig).sum(axis=0),
        ],
        axis=1,
    )
    return np.asarray(grads, dtype=np.float64)
