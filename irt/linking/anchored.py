"""Fixed-anchor calibration: new items and a new group on an old scale.

The anchor items keep the parameters an earlier calibration gave them; only the other
items are estimated, and the new group's ability distribution is not assumed N(0, 1)
but estimated as N(μ, σ²) on the old scale, its mean and variance re-estimated from the
posterior after every cycle (fixed item parameter calibration with multiple weights
updating; Kim, 2006, *Journal of Educational Measurement* 43, 355–381). Without that
update the N(0, 1) prior would pull a stronger or weaker new group back to the old
group's centre and bias every new item.

Plain EM: the acceleration of ``EMCalibrator`` extrapolates the item coordinates only,
and here the latent distribution moves with them.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from irt.design_blocks import DesignMatrices
from irt.em import EMSettings, e_step_at, latent_moments, params_at
from irt.errors import ConvergenceWarning, IRTError
from irt.item_se import item_standard_errors
from irt.models import ItemParams, ModelKind
from irt.mstep import MStepSpec, from_abcd, m_step
from irt.priors import ItemPriors
from irt.quadrature import normal_on
from irt.responses import ResponseMatrix
from irt.start import classical_start
from irt.types import FloatArray

#: The grid and stopping rule unless told: those of ``EMCalibrator`` but for twice the
#: cycles, as plain EM takes more of them.
ANCHORED_EM = EMSettings(max_iter=1000)


@dataclass(frozen=True)
class AnchoredFit:
    """Every item's parameters on the old scale (anchors exactly as given), the new
    group's latent mean and SD on that scale, and how the fit went."""

    params: ItemParams
    anchored: tuple[str, ...]
    latent_mean: float
    latent_sd: float
    n_iter: int
    converged: bool


def calibrate_with_anchors(
    responses: ResponseMatrix,
    fixed: ItemParams,
    model: ModelKind | str = ModelKind.THREE_PL,
    priors: ItemPriors | None = None,
    settings: EMSettings = ANCHORED_EM,
) -> AnchoredFit:
    """Estimate the items of ``responses`` that ``fixed`` does not hold, keeping those it
    does at their values, on ``fixed``'s scale."""
    kind = ModelKind(model)
    tol, max_iter = settings.tol, settings.max_iter
    anchor_of = {item: k for k, item in enumerate(fixed.item_ids)}
    anchor_cols = np.array([j for j, i in enumerate(responses.item_ids) if i in anchor_of])
    if anchor_cols.size < 2:
        raise IRTError(f"fixed-anchor calibration needs at least 2 anchors, got {anchor_cols.size}")
    free = np.setdiff1d(np.arange(responses.n_items), anchor_cols)
    pri = (priors or ItemPriors.default_for(kind)).for_model(kind)
    points = np.linspace(-settings.bound, settings.bound, settings.n_quad)
    spec = MStepSpec(model=kind, priors=pri, theta=points)
    design = DesignMatrices.from_responses(responses)

    rows = [anchor_of[responses.item_ids[j]] for j in anchor_cols]
    anchors = fixed.subset(np.array(rows))
    anchor_coords = from_abcd(anchors.a, anchors.b, anchors.c, anchors.d, spec)
    guess = 0.15 if kind.has_guessing else 0.0
    a0, b0, c0 = classical_start(design, guess)
    coords = from_abcd(a0, b0, c0, np.ones_like(a0), spec)
    coords[anchor_cols] = anchor_coords

    mean, sd = 0.0, 1.0
    converged, n_iter = False, 0
    active = list(spec.active)
    for n_iter in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        step = e_step_at(coords, design, spec, normal_on(points, mean, sd))
        new = m_step(coords, step.expected_right, step.expected_total, spec, 25, tol / 10)
        new[anchor_cols] = anchor_coords
        new_mean, new_var = latent_moments(step.posterior, points)
        new_sd = float(np.sqrt(max(new_var, 1e-6)))
        change = max(
            float(np.abs(new[free][:, active] - coords[free][:, active]).max(initial=0.0)),
            abs(new_mean - mean),
            abs(new_sd - sd),
        )
        coords, mean, sd = new, new_mean, new_sd
        if change < tol:
            converged = True
            break
    if not converged:
        warnings.warn(
            f"fixed-anchor EM stopped at its cap of {max_iter} cycles (tolerance {tol})",
            ConvergenceWarning,
            stacklevel=2,
        )
    step = e_step_at(coords, design, spec, normal_on(points, mean, sd))
    se_a, se_b, se_c = item_standard_errors(coords, design, step.posterior, spec)

    def kept(se: FloatArray, old: FloatArray | None) -> FloatArray:
        # An anchor's standard error is the one its own calibration gave it.
        out = se.copy()
        out[anchor_cols] = old if old is not None else np.nan
        return out

    errors = kept(se_a, anchors.se_a), kept(se_b, anchors.se_b), kept(se_c, anchors.se_c)
    params = params_at(responses.item_ids, coords, spec, errors)
    anchored = tuple(responses.item_ids[j] for j in anchor_cols)
    return AnchoredFit(params, anchored, mean, sd, n_iter, converged)
