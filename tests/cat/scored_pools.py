"""A calibrated pool of scored items for tests: open items scored 0..3 or 0..4 beside
single-choice items, its true parameters as params.csv, simulated references."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cat.engine.simulation import draw_scores
from cat.prediction.scored_cross_fit import mean_shares, scored_abilities
from irt.polytomous import ItemType, PolytomousParams
from irt.polytomous_responses import PolytomousResponses
from itempool import PoolItem
from itempool.formats.polytomous_params import write_polytomous_params
from itempool.formats.responses import write_scored_jsonl

SCENARIOS = ("dosing", "triage")


def scored_params(n_items: int, seed: int) -> PolytomousParams:
    """Every third item a 3PL single choice, the others graded with 4 or 5 scores."""
    rng = np.random.default_rng(seed)
    kinds, thresholds = [], []
    for j in range(n_items):
        if j % 3 == 2:
            kinds.append(ItemType.THREE_PL)
            thresholds.append([float(rng.normal())])
        else:
            kinds.append(ItemType.GRADED)
            m = 3 + j % 2
            steps = np.cumsum(0.4 + rng.exponential(0.3, m))
            thresholds.append(list(-(rng.normal() + steps - steps.mean())))
    a = rng.lognormal(0.1, 0.25, n_items)
    c = [0.2 if kind is ItemType.THREE_PL else 0.0 for kind in kinds]
    ids = [f"q{j:03d}" for j in range(n_items)]
    d = [list(np.asarray(t) * a[j]) for j, t in enumerate(thresholds)]
    return PolytomousParams.create(kinds, a, d, c, item_ids=ids)


def items_of(params: PolytomousParams) -> list[PoolItem]:
    out = []
    for j, item in enumerate(params.item_ids):
        scenario = SCENARIOS[j % 2]
        if params.item_types[j].binary:
            out.append(
                PoolItem(
                    id=item,
                    scenario=scenario,
                    question=f"Which dose is right for patient {j}?",
                    options={"A": "10 mg", "B": "20 mg", "C": "30 mg", "D": "40 mg"},
                    answer="B",
                )
            )
        else:
            out.append(
                PoolItem(
                    id=item,
                    scenario=scenario,
                    type="open",
                    question=f"Explain the first step of managing case {j}.",
                    references=(f"Assess airway and breathing first in case {j}.",),
                    max_score=int(params.max_scores[j]),
                )
            )
    return out


def simulate_scores(
    params: PolytomousParams, theta: np.ndarray, seed: int, names: list[str]
) -> PolytomousResponses:
    rng = np.random.default_rng(seed)
    n = len(theta)
    items = np.tile(np.arange(params.n_items), n)
    values = draw_scores(params, np.repeat(theta, params.n_items), items, rng)
    return PolytomousResponses.from_array(
        values.reshape(n, params.n_items),
        subject_ids=names,
        item_ids=params.item_ids,
        n_categories=[int(k) for k in params.n_categories],
    )


def make_scored_pool(folder: Path, n_items: int = 90, n_refs: int = 30, seed: int = 0) -> Path:
    """Write the pool into ``folder`` (created) and the references' scores beside it as
    ``folder.parent / "scores.jsonl"``; return the pool folder."""
    folder.mkdir(parents=True, exist_ok=True)
    params = scored_params(n_items, seed)
    manifest = {"name": "scored-test", "version": "1", "language": "en", "scenarios": SCENARIOS}
    (folder / "pool.json").write_text(json.dumps(manifest), encoding="utf-8")
    lines = [item.model_dump_json(exclude_defaults=True) for item in items_of(params)]
    (folder / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_polytomous_params(params, folder / "params.csv")
    names = [f"ref{k:02d}" for k in range(n_refs)]
    theta_true = np.random.default_rng(seed + 1).normal(size=n_refs)
    scores = simulate_scores(params, theta_true, seed + 2, names)
    write_scored_jsonl(scores, folder.parent / "scores.jsonl")
    theta, se = scored_abilities(params, scores, "eap")
    share = mean_shares(scores)
    with (folder / "reference.jsonl").open("w", encoding="utf-8") as fh:
        for k, name in enumerate(names):
            row = {
                "subject_id": name,
                "theta": float(theta[k]),
                "se": float(se[k]),
                "accuracy": float(share[k]),
                "n_answered": n_items,
            }
            fh.write(json.dumps(row) + "\n")
    return folder
