"""Item standard errors from the cross-product (XPD) of per-subject scores.

For subject n and item j, the observed-data score is the posterior expectation of the
complete-data score: s_nj = Σ_q post_nq ∂ log p(y_nj | θ_q) / ∂η_j. Its cross-product
summed over subjects estimates item j's information block (mirt's ``SE.type =
"crossprod"``); the prior's curvature is added, and the block is inverted item by item
(covariances between items are ignored). The sums run over one block of subjects at a
time (``irt.design_blocks``). Standard errors of (a, b, c) follow by the delta
method from the internal coordinates.
"""

from __future__ import annotations

import numpy as np

from irt.design_blocks import DesignMatrices
from irt.estimation.arrays import column_dots, empty, is_numpy, to_numpy, zeros
from irt.estimation.observed_information import invert_item_blocks, root_variance
from irt.models import ModelKind
from irt.mstep_coords import ALPHA, DELTA, GAMMA, MStepSpec, estimated_columns, to_abcd
from irt.mstep_objective import grid_curves
from irt.mstep_priors import add_prior_terms
from irt.types import FloatArray

_EPS = 1e-12


def item_standard_errors(
    coords: FloatArray, design: DesignMatrices, posterior: FloatArray, spec: MStepSpec
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(se_a, se_b, se_c); NaN where a parameter is not estimated or not identified.

    The sums over subjects run where the arrays are (numpy, or torch on a device with
    ``design`` a ``DeviceDesign``); the items' blocks are inverted on the host."""
    info, slope_score = _score_cross_products(coords, design, posterior, spec)
    coords, info = to_numpy(coords), to_numpy(info)
    a, b, c, d = to_abcd(coords, spec)
    grad_dummy = np.zeros((len(a), 4))
    add_prior_terms(grad_dummy, info, coords, a, b, c, d, spec)
    if slope_score is not None:
        return _one_pl_errors(info, to_numpy(slope_score), a, b)
    cov = _invert_blocks(info, estimated_columns(spec))
    return _delta_method(cov, a, b, c, spec)


def _score_cross_products(
    coords: FloatArray, design: DesignMatrices, posterior: FloatArray, spec: MStepSpec
) -> tuple[FloatArray, FloatArray | None]:
    """Σ_n s_nj s_nj' for every item (J, 4, 4), and with the 1PL each subject's score
    for the shared slope."""
    curves = grid_curves(coords, spec)
    cols = curves.columns
    derivs = dict(zip(cols, curves.derivs, strict=True))
    # ∂ log p / ∂η and ∂ log q / ∂η at each node, (J, Q).
    on_right = {k: (derivs[k] / curves.p).T for k in cols}
    on_wrong = {k: (derivs[k] / curves.q).T for k in cols}
    info = zeros((coords.shape[0], 4, 4), like=coords)
    # The 1PL's shared slope: each subject's score for it, summed over the items.
    one_pl = spec.model is ModelKind.ONE_PL
    slope_score = empty(design.n_subjects, like=coords) if one_pl else None
    n_items = coords.shape[0]
    # On the host a block's (rows x items) temporaries are taken a tile of items at a
    # time, small enough to stay in the processor's cache (a 30,000-item test in whole
    # blocks ran 1.7 times slower); torch, and the 1PL's slope score, take whole rows.
    tiled = is_numpy(coords) and not one_pl
    for block in design.blocks():
        post = posterior[block.rows]
        wrong = block.wrong()
        tile = max(1, _TILE_CELLS // post.shape[0]) if tiled else n_items
        for lo in range(0, n_items, tile):
            items = slice(lo, lo + tile)
            right_t, wrong_t = block.right[:, items], wrong[:, items]
            scores = {
                k: right_t * (post @ on_right[k][:, items])
                - wrong_t * (post @ on_wrong[k][:, items])
                for k in cols
            }
            for i, k in enumerate(cols):
                for k2 in cols[i:]:
                    info[items, k, k2] += column_dots(scores[k], scores[k2])
            if slope_score is not None:
                slope_score[block.rows] = scores[ALPHA].sum(axis=1)
    for i, k in enumerate(cols):
        for k2 in cols[i + 1 :]:
            info[:, k2, k] = info[:, k, k2]
    return info, slope_score


#: (rows x items) cells of one tile of the scores on the host.
_TILE_CELLS = 2**18


def _invert_blocks(info: FloatArray, cols: list[int]) -> FloatArray:
    """Invert each item's block; where it is singular (an asymptote pinned at its bound
    carries no information), fall back to the slope–intercept block alone."""
    use = np.zeros(info.shape[:2], dtype=bool)
    use[:, cols] = True
    cov = invert_item_blocks(info, use)
    failed = np.isnan(cov[:, ALPHA, ALPHA])
    if failed.any():
        use[failed] = False
        use[np.ix_(np.flatnonzero(failed), np.array([ALPHA, DELTA]))] = True
        cov[failed] = invert_item_blocks(info[failed], use[failed])
    return cov


def _delta_method(
    cov: FloatArray, a: FloatArray, b: FloatArray, c: FloatArray, spec: MStepSpec
) -> tuple[FloatArray, FloatArray, FloatArray]:
    da = a if spec.log_slope else np.ones_like(a)
    var_a = da**2 * cov[:, ALPHA, ALPHA]
    # b = −δ/a: ∂b/∂δ = −1/a, ∂b/∂α = −b·(∂a/∂α)/a.
    gb_delta = -1.0 / a
    gb_alpha = -b * da / a
    var_b = (
        gb_delta**2 * cov[:, DELTA, DELTA]
        + gb_alpha**2 * cov[:, ALPHA, ALPHA]
        + 2 * gb_delta * gb_alpha * cov[:, ALPHA, DELTA]
    )
    if spec.model.has_guessing:
        var_c = (c * (1 - c)) ** 2 * cov[:, GAMMA, GAMMA]
    else:
        var_c = np.full_like(a, np.nan)
    return root_variance(var_a), root_variance(var_b), root_variance(var_c)


def _one_pl_errors(
    info: FloatArray, slope_score: FloatArray, a: FloatArray, b: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    # The shared slope's information sums over subjects the square of its total score.
    var_a = 1.0 / max(float(slope_score @ slope_score), _EPS)
    var_delta = 1.0 / np.maximum(info[:, DELTA, DELTA], _EPS)
    var_b = var_delta / a**2 + (b / a) ** 2 * var_a
    return (
        np.full_like(a, np.sqrt(var_a)),
        root_variance(var_b),
        np.full_like(a, np.nan),
    )
