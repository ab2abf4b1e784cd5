"""A small pool with continuous items for the command-line tests: single-choice items
(3PL), open items scored 0..4 (graded) and open items scored in [0, 1] (Beta), in two
scenarios, with simulated reference models' answers in one mixed file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cat.engine.simulation import draw_scores
from irt.continuous import ContinuousParams
from irt.mixed import MixedParams
from irt.polytomous import ItemType, PolytomousParams

N_EACH = 15


def _items() -> list[dict[str, object]]:
    items: list[dict[str, object]] = []
    for k in range(N_EACH):
        scenario = "dosing" if k % 2 else "triage"
        items.append(
            {
                "id": f"pick{k:02d}",
                "scenario": scenario,
                "question": f"Which dose is right for case {k}?",
                "options": {"A": f"{k} mg", "B": f"{k + 1} mg", "C": f"{k + 2} mg"},
                "answer": "B",
            }
        )
        items.append(
            {
                "id": f"calc{k:02d}",
                "scenario": scenario,
                "type": "open",
                "question": f"Explain how to compute the dose of case {k}.",
                "references": [f"Multiply the weight by {k + 2} mg per kg."],
            }
        )
        items.append(
            {
                "id": f"text{k:02d}",
                "scenario": scenario,
                "type": "open",
                "continuous": True,
                "question": f"Summarise the guideline of case {k}.",
                "references": [f"Give {k + 1} mg twice daily with food."],
            }
        )
    return items


def true_params(seed: int = 0) -> MixedParams:
    rng = np.random.default_rng(seed)
    pick = [f"pick{k:02d}" for k in range(N_EACH)]
    calc = [f"calc{k:02d}" for k in range(N_EACH)]
    text = [f"text{k:02d}" for k in range(N_EACH)]
    slopes = rng.lognormal(0.2, 0.25, 2 * N_EACH)
    thresholds: list[list[float]] = [[float(-slopes[k] * rng.normal())] for k in range(N_EACH)]
    for k in range(N_EACH, 2 * N_EACH):
        b = np.sort(rng.normal(0.0, 1.0, 4))
        thresholds.append(list(-slopes[k] * b))
    discrete = PolytomousParams.create(
        [ItemType.THREE_PL] * N_EACH + [ItemType.GRADED] * N_EACH,
        slopes,
        thresholds,
        [0.2] * N_EACH + [0.0] * N_EACH,
        item_ids=pick + calc,
    )
    continuous = ContinuousParams.create(
        "beta",
        rng.lognormal(0.0, 0.25, N_EACH),
        rng.normal(0.0, 0.8, N_EACH),
        rng.uniform(1.5, 3.0, N_EACH),
        item_ids=text,
    )
    return MixedParams(discrete, continuous)


def answers(
    params: MixedParams, theta: np.ndarray, rng: np.random.Generator, missing: float = 0.05
) -> np.ndarray:
    """(N, J) scores in the params' item order; a share ``missing`` left out."""
    n, j = theta.size, params.n_items
    values = draw_scores(params, np.repeat(theta, j), np.tile(np.arange(j), n), rng)
    values = values.reshape(n, j)
    values[rng.random(values.shape) < missing] = np.nan
    return values


def write_jsonl(
    path: Path, names: list[str], item_ids: tuple[str, ...], values: np.ndarray
) -> None:
    lines = []
    for name, row in zip(names, values, strict=True):
        responses = {
            item: (round(float(v), 4) if item.startswith("text") else int(v))
            for item, v in zip(item_ids, row, strict=True)
            if not np.isnan(v)
        }
        lines.append(json.dumps({"subject_id": name, "responses": responses}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_mixed_pool(folder: Path, n_models: int = 80, seed: int = 0) -> dict[str, Path]:
    """The pool in ``folder / "pool"``, the references' answers and three new models'."""
    pool = folder / "pool"
    pool.mkdir(parents=True)
    manifest = {"name": "mixed-test", "version": "1", "language": "en"}
    (pool / "pool.json").write_text(json.dumps(manifest) + "\n", encoding="utf-8")
    lines = [json.dumps(item) for item in _items()]
    (pool / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    params = true_params(seed)
    rng = np.random.default_rng(seed + 1)
    theta = np.sort(rng.normal(size=n_models))
    names = [f"model-{k:03d}" for k in range(n_models)]
    write_jsonl(folder / "answers.jsonl", names, params.item_ids, answers(params, theta, rng))
    new = answers(params, np.array([1.2, 0.0, -1.2]), rng, missing=0.0)
    new_names = ["new-strong", "new-middle", "new-weak"]
    write_jsonl(folder / "new.jsonl", new_names, params.item_ids, new)
    return {"pool": pool, "answers": folder / "answers.jsonl", "new": folder / "new.jsonl"}
