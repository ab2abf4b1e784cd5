"""Pool health: which items misfit, which look broken, which drifted (``cat pool fit``).

Every reason an item is flagged is one of ``REASONS``; the statistics behind them:

- ``misfit``: a grouped chi-square given θ with bootstrap p-values, adjusted for the
  number of items (``irt.item_fit`` states the method);
- ``low_discrimination``: the pool's slope a below ``LOW_SLOPE`` (or negative);
- ``c_at_prior_edge``: the pool's c outside the central 99% of the calibration's prior
  on c: the data pushed it to where only the prior holds it;
- ``all_right`` / ``all_wrong``: every subject who answered got it right (wrong);
- ``key_suspect``: with the subjects' chosen options (``--choices``), one distractor
  drew at least half of the strongest third and more of them than the key; and, with or
  without them, right answers go with *lower* θ (point-biserial r < 0, one-sided test,
  adjusted);
- ``easier`` / ``harder``: with earlier responses, b moved beyond chance (``irt.drift``;
  two-sided z-test, adjusted). ``easier`` for later, new models only is the
  contamination signal.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import beta as beta_dist
from scipy.stats import t as t_dist

from cat.errors import CatError
from cat.pool_format import LoadedPool
from irt.drift import DEFAULT_B_PRIOR, DriftTest, drift_test
from irt.errors import IRTError
from irt.item_fit import CORRECTIONS, ItemFit, adjust_p_values, item_fit
from irt.models import ItemParams
from irt.priors import ItemPriors
from irt.responses import ResponseMatrix
from irt.scoring import AbilityMethod, score_abilities
from irt.types import FloatArray
from synth.items import ItemType

#: Every reason an item can be flagged, the most telling first.
REASONS = (
    "misfit",
    "key_suspect",
    "easier",
    "harder",
    "low_discrimination",
    "c_at_prior_edge",
    "all_right",
    "all_wrong",
)
#: A slope below this hardly separates strong from weak subjects.
LOW_SLOPE = 0.2
#: The central share of the c prior inside which c is unremarkable.
PRIOR_CENTRAL = 0.99
#: Fewest subjects in the strongest third for the distractor rule.
MIN_TOP_GROUP = 3
#: Above this median SE of θ the fit test's "θ known" premise is strained. It held on
#: simulated short tests (1,000 subjects x 100 items, median SE 0.25: 4.2% of fitting
#: items below p = 0.05 over nine pools, from 2% to 7% per pool), but real short tests
#: are better served by summed-score statistics (S-X², Orlando & Thissen 2000).
IMPRECISE_THETA_SE = 0.2

Choices = dict[str, dict[str, str]]  # subject → item → chosen option label


@dataclass(frozen=True)
class FitSettings:
    """How ``check_pool_fit`` tests: recorded in its output."""

    alpha: float = 0.05
    correction: str = "bh"
    replicates: int = 50
    seed: int = 0
    min_responses: int = 10

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise CatError(f"alpha must lie in (0, 1), got {self.alpha}")
        if self.correction not in CORRECTIONS:
            raise CatError(f"unknown correction {self.correction!r}; use {', '.join(CORRECTIONS)}")
        if self.min_responses < 3:
            raise CatError(f"--min-responses must be at least 3, got {self.min_responses}")


@dataclass
class _Item:
    flags: list[dict[str, str]] = field(default_factory=list)

    def flag(self, reason: str, detail: str) -> None:
        self.flags.append({"reason": reason, "detail": detail})


def read_choices(path: Path) -> Choices:
    """Chosen options, JSONL: ``{"subject_id": ..., "choices": {item: "B", ...}}`` per line
    (what ``cat synth`` writes beside its responses)."""
    out: Choices = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            subject, choices = str(row["subject_id"]), row["choices"]
            if not isinstance(choices, dict):
                raise TypeError("choices is not an object")
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise CatError(
                f"{path}:{number}: expected {{'subject_id': ..., 'choices': {{item: option}}}}"
                f" ({exc})"
            ) from exc
        out[subject] = {str(k): str(v) for k, v in choices.items() if v is not None}
    return out


def pool_priors(pool: LoadedPool, params: ItemParams) -> ItemPriors:
    """The priors the pool was calibrated with (its provenance), else the defaults."""
    described = (pool.manifest.calibration or {}).get("priors")
    if isinstance(described, dict):
        try:
            return ItemPriors.from_description(described)
        except IRTError as exc:
            raise CatError(f"{pool.dir}/pool.json: {exc}") from exc
    return ItemPriors.default_for(params.model)


def check_pool_fit(
    pool: LoadedPool,
    responses: ResponseMatrix,
    settings: FitSettings,
    *,
    baseline: ResponseMatrix | None = None,
    choices: Choices | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Every test of the module on ``responses`` (and ``baseline``, the earlier period),
    as plain data: settings, method, counts per reason, and one row per pool item."""
    params = pool.params
    if params is None:
        raise CatError(f"pool {pool.dir} has no parameters (params.csv); calibrate it first")
    known = set(params.item_ids)
    ignored = [i for i in responses.item_ids if i not in known]
    if len(ignored) == responses.n_items:
        raise CatError("none of the responses' items is in the pool")
    wide = responses.on_items(params.item_ids)
    priors = pool_priors(pool, params)
    abilities = score_abilities(wide, params, AbilityMethod.EAP)
    theta = abilities.theta
    right = (wide.values == 1).astype(np.float64)
    observed = wide.observed.astype(np.float64)
    try:
        fit = item_fit(
            right,
            observed,
            theta,
            params,
            priors,
            theta_se=abilities.se,
            replicates=settings.replicates,
            seed=settings.seed,
            min_responses=settings.min_responses,
            progress=progress,
        )
    except IRTError as exc:
        raise CatError(str(exc)) from exc
    rows = [_Item() for _ in params.item_ids]
    p_fit = adjust_p_values(fit.p_value, settings.correction)
    for j, item in enumerate(rows):
        if p_fit[j] < settings.alpha:
            item.flag(
                "misfit",
                f"right answers do not follow the curve across ability groups (z "
                f"{fit.z[j]:+.1f}, adjusted p {p_fit[j]:.2g}; outfit {fit.outfit[j]:.2f})",
            )
    _flag_parameters(rows, params, priors)
    _flag_extremes(rows, right, observed)
    r, p_key = _item_theta_correlation(right, observed, theta, settings)
    if choices:
        if not set(choices) & set(wide.subject_ids):
            raise CatError(
                "no subject of the chosen options is among the responses' subjects: "
                "give the choices file written with these responses"
            )
        _flag_distractors(rows, pool, wide, theta, choices)
    for k in np.flatnonzero(p_key < settings.alpha):
        if not any(f["reason"] == "key_suspect" for f in rows[k].flags):
            rows[k].flag(
                "key_suspect",
                f"weaker subjects get it right more often (r = {r[k]:+.2f} with θ, "
                f"adjusted p {p_key[k]:.2g}); check the key",
            )
    drift = None
    if baseline is not None:
        drift = _drift(rows, priors, params, wide, baseline, settings)
    checks = _Checks(
        wide=wide,
        theta=theta,
        theta_se=abilities.se,
        fit=fit,
        p_fit=p_fit,
        r=r,
        rows=rows,
        ignored=ignored,
        drift=drift,
        baseline_subjects=baseline.n_subjects if baseline is not None else 0,
        choices_used=bool(choices),
    )
    return _report(pool, checks, settings)


def _flag_parameters(rows: list[_Item], params: ItemParams, priors: ItemPriors) -> None:
    for j in np.flatnonzero(params.a < LOW_SLOPE):
        word = "negative" if params.a[j] < 0 else "near-zero"
        rows[j].flag(
            "low_discrimination",
            f"{word} discrimination a = {params.a[j]:.2f}: it hardly separates strong "
            "from weak subjects",
        )
    if not params.model.has_guessing:
        return
    if priors.has_c and priors.c_alpha is not None and priors.c_beta is not None:
        tail = (1 - PRIOR_CENTRAL) / 2
        lo, hi = beta_dist.ppf([tail, 1 - tail], priors.c_alpha, priors.c_beta)
        source = f"its prior's central {PRIOR_CENTRAL:.0%} ({lo:.2f} … {hi:.2f})"
    else:
        lo, hi = 0.001, 0.5
        source = "its plausible range (0.001 … 0.5; no prior was used)"
    for j in np.flatnonzero((params.c < lo) | (params.c > hi)):
        rows[j].flag(
            "c_at_prior_edge",
            f"c = {params.c[j]:.3f} beyond {source}: the curve's floor is not identified",
        )


def _flag_extremes(rows: list[_Item], right: FloatArray, observed: FloatArray) -> None:
    n = observed.sum(axis=0)
    n_right = (right * observed).sum(axis=0)
    for j in np.flatnonzero((n > 0) & (n_right == n)):
        rows[j].flag("all_right", f"all {int(n[j])} subjects who answered got it right")
    for j in np.flatnonzero((n > 0) & (n_right == 0)):
        rows[j].flag("all_wrong", f"all {int(n[j])} subjects who answered got it wrong")


def _item_theta_correlation(
    right: FloatArray, observed: FloatArray, theta: FloatArray, settings: FitSettings
) -> tuple[FloatArray, FloatArray]:
    """Point-biserial r of each item's answers with θ and the adjusted one-sided p of
    r < 0 (a t-test on n − 2 degrees of freedom)."""
    n = observed.sum(axis=0)
    t = theta[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_t = (observed * t).sum(axis=0) / n
        mean_x = (observed * right).sum(axis=0) / n
        dt, dx = observed * (t - mean_t), observed * (right - mean_x)
        r = (dt * dx).sum(axis=0) / np.sqrt((dt**2).sum(axis=0) * (dx**2).sum(axis=0))
        stat = r * np.sqrt((n - 2) / np.maximum(1 - r**2, 1e-12))
    p = np.where((n >= settings.min_responses) & np.isfinite(r), t_dist.cdf(stat, n - 2), np.nan)
    return r, adjust_p_values(p, settings.correction)


def _flag_distractors(
    rows: list[_Item],
    pool: LoadedPool,
    wide: ResponseMatrix,
    theta: FloatArray,
    choices: Choices,
) -> None:
    """Per single-answer item, the strongest third of the subjects with a recorded
    choice: a distractor chosen by at least half of them and more often than the key."""
    order = np.argsort(-theta)
    for j, item in enumerate(pool.items):
        if item.type is not ItemType.SINGLE or not isinstance(item.answer, str):
            continue
        picked = [
            choices[wide.subject_ids[k]][item.id]
            for k in order
            if item.id in choices.get(wide.subject_ids[k], {})
        ]
        top = picked[: len(picked) // 3]
        if len(top) < MIN_TOP_GROUP:
            continue
        counts: dict[str, int] = {}
        for option in top:
            counts[option] = counts.get(option, 0) + 1
        key_count = counts.pop(item.answer, 0)
        if not counts:
            continue
        option, count = max(counts.items(), key=lambda kv: kv[1])
        if count > key_count and 2 * count >= len(top):
            rows[j].flag(
                "key_suspect",
                f"distractor {option} chosen by {count} of the {len(top)} strongest subjects "
                f"(the key {item.answer} by {key_count})",
            )


def _drift(
    rows: list[_Item],
    priors: ItemPriors,
    params: ItemParams,
    later: ResponseMatrix,
    baseline: ResponseMatrix,
    settings: FitSettings,
) -> DriftTest:
    prior = DEFAULT_B_PRIOR
    if priors.b_mean is not None and priors.b_sd is not None:
        prior = (priors.b_mean, priors.b_sd)
    test = drift_test(
        baseline.on_items(params.item_ids),
        later,
        params,
        alpha=settings.alpha,
        correction=settings.correction,
        min_responses=settings.min_responses,
        prior=prior,
    )
    for j in np.flatnonzero(test.p_adjusted < settings.alpha):
        easier = bool(test.z[j] < 0)
        note = "; a contamination signal if the later subjects are new models" if easier else ""
        rows[j].flag(
            "easier" if easier else "harder",
            f"b {test.b_earlier[j]:+.2f} → {test.b_later[j]:+.2f} (z {test.z[j]:+.1f}, "
            f"adjusted p {test.p_adjusted[j]:.2g}){note}",
        )
    return test


@dataclass(frozen=True)
class _Checks:
    """What ``check_pool_fit`` found, for ``_report`` to lay out."""

    wide: ResponseMatrix
    theta: FloatArray
    theta_se: FloatArray
    fit: ItemFit
    p_fit: FloatArray
    r: FloatArray
    rows: list[_Item]
    ignored: list[str]
    drift: DriftTest | None
    baseline_subjects: int
    choices_used: bool


def _report(pool: LoadedPool, checks: _Checks, settings: FitSettings) -> dict[str, Any]:
    params = pool.params
    assert params is not None
    fit, drift, p_fit = checks.fit, checks.drift, checks.p_fit

    def num(x: float) -> float | None:
        return float(x) if np.isfinite(x) else None

    items = []
    for j, item_id in enumerate(params.item_ids):
        row: dict[str, Any] = {
            "item_id": item_id,
            "n": int(fit.n_responses[j]),
            "a": float(params.a[j]),
            "b": float(params.b[j]),
            "c": float(params.c[j]),
            "outfit": num(fit.outfit[j]),
            "infit": num(fit.infit[j]),
            "z": num(fit.z[j]),
            "p": num(fit.p_value[j]),
            "p_adjusted": num(p_fit[j]),
            "r_theta": num(checks.r[j]),
            "flags": checks.rows[j].flags,
        }
        if drift is not None:
            row["b_earlier"] = float(drift.b_earlier[j])
            row["b_later"] = float(drift.b_later[j])
            row["drift_z"] = num(drift.z[j])
            row["drift_p_adjusted"] = num(drift.p_adjusted[j])
        items.append(row)
    counts = {reason: 0 for reason in REASONS}
    for row in items:
        for reason in {f["reason"] for f in row["flags"]}:
            counts[reason] += 1
    tested = np.isfinite(fit.p_value)
    median_se = float(np.median(checks.theta_se))
    return {
        "pool": {
            "name": pool.manifest.name,
            "version": pool.manifest.version,
            "dir": str(pool.dir),
        },
        "subjects": checks.wide.n_subjects,
        "theta_range": [float(checks.theta.min()), float(checks.theta.max())],
        "theta_median_se": median_se,
        "warning": None
        if median_se <= IMPRECISE_THETA_SE
        else (
            f"theta is imprecise (median SE {median_se:.2f} > {IMPRECISE_THETA_SE}): the fit "
            "test takes theta as known, which suits long tests; on a short test read its "
            "p-values with care"
        ),
        "items": params.n_items,
        "items_tested": int(tested.sum()),
        "items_not_in_pool": len(checks.ignored),
        "settings": {
            "alpha": settings.alpha,
            "correction": settings.correction,
            "replicates": settings.replicates,
            "seed": settings.seed,
            "min_responses": settings.min_responses,
            "choices": checks.choices_used,
        },
        "method": (
            "grouped chi-square (Yen's Q1 at known theta, cube root) of each item's curve "
            "refitted at the subjects' EAP theta, against "
            f"{settings.replicates} parametric-bootstrap replicates per item "
            "(Student t tail); one-sided p, "
            f"{'Benjamini-Hochberg' if settings.correction == 'bh' else 'Holm'} adjusted"
        ),
        "share_p_below_alpha": float(np.mean(fit.p_value[tested] < settings.alpha))
        if tested.any()
        else None,
        "flag_counts": counts,
        "flagged": sum(1 for row in items if row["flags"]),
        "drift": None
        if drift is None
        else {
            "baseline_subjects": checks.baseline_subjects,
            "tested": int(drift.tested.sum()),
            "scored_on_items": drift.scored_on_items,
        },
        "item_rows": items,
    }
