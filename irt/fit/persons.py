"""Person fit: does a response pattern look like the model's?

The standardised log-likelihood lz (Drasgow, Levine & Williams, 1985) compares the
log-likelihood of the observed answers at θ̂ with its expectation and variance under the
model: lz = (l0 − E[l0]) / √Var[l0]. Patterns the model cannot explain — hard items
right and easy ones wrong, as after memorising leaked questions — give large negative
values; lz < −1.645 is the usual one-sided 5% flag. With θ estimated from the same
answers lz is slightly conservative (Snijders, 2001, gives the correction); it is a
screen, not a test of guilt.
"""

from __future__ import annotations

import numpy as np

from irt.errors import IRTError
from irt.parameter_set import CategoryItems, ParameterSet

#: lz below this is flagged (one-sided 5%).
LZ_FLAG = -1.645


def lz(responses: np.ndarray, theta: float, params: ParameterSet) -> float:
    """lz of one examinee's 0/1 ``responses`` to the 0/1 items of ``params`` (1–4PL) at
    ``theta``; NaN when there are no answers or every probability is 0 or 1."""
    y = np.asarray(responses, dtype=np.float64)
    if y.shape != (params.n_items,):
        raise IRTError(f"{y.shape[0] if y.ndim else 0} responses for {params.n_items} items")
    if not np.isin(y, (0.0, 1.0)).all():
        raise IRTError("person fit needs 0/1 responses")
    if y.size == 0:
        return float("nan")
    return lz_binary(y, np.asarray(params.expected_score([theta]))[0])


def lz_binary(responses: np.ndarray, p: np.ndarray) -> float:
    """lz of 0/1 ``responses`` to items answered right with probabilities ``p`` (both
    (J,)); ``lz`` at θ, and the form every 0/1 model shares."""
    y = np.asarray(responses, dtype=np.float64)
    if y.size == 0:
        return float("nan")
    p = np.clip(p, 1e-12, 1 - 1e-12)
    log_p, log_q = np.log(p), np.log1p(-p)
    l0 = float(np.sum(y * log_p + (1 - y) * log_q))
    expected = float(np.sum(p * log_p + (1 - p) * log_q))
    variance = float(np.sum(p * (1 - p) * (log_p - log_q) ** 2))
    if not variance > 0:
        return float("nan")
    return (l0 - expected) / float(np.sqrt(variance))


def lz_scored(scores: np.ndarray, theta: float, params: CategoryItems) -> float:
    """lz of one examinee's ``scores`` (0..m_j) on the items of ``params`` at ``theta``:
    Drasgow, Levine & Williams' (1985) polytomous lz, (l0 − E l0)/√Var l0 with l0 the
    log-likelihood of the scores; NaN when there are none or it has no variance."""
    x = np.asarray(scores, dtype=np.float64)
    if x.shape != (params.n_items,):
        raise IRTError(f"{x.shape[0] if x.ndim else 0} scores for {params.n_items} items")
    if np.any((x != np.round(x)) | (x < 0) | (x > params.max_scores)):
        raise IRTError("person fit needs whole scores within each item's 0..m")
    if x.size == 0:
        return float("nan")
    return lz_categories(x, params.log_probs([theta])[0])


def lz_categories(scores: np.ndarray, log_p: np.ndarray) -> float:
    """lz of whole ``scores`` (J,) from their items' log category probabilities
    ``log_p`` (J, K), −inf beyond an item's categories; ``lz_scored`` at θ, and the
    form every scored model shares."""
    x = np.asarray(scores, dtype=np.float64)
    if x.size == 0:
        return float("nan")
    p = np.exp(log_p)
    finite = np.where(np.isfinite(log_p), log_p, 0.0)
    l0 = float(finite[np.arange(x.size), x.astype(np.int_)].sum())
    mean = (p * finite).sum(axis=1)
    variance = float(((p * finite**2).sum(axis=1) - mean**2).sum())
    if not variance > 0:
        return float("nan")
    return (l0 - float(mean.sum())) / float(np.sqrt(variance))
