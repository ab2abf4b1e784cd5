"""Write the scored example: a pool of multiple-choice and open items, and the scores of
simulated LLMs on it.

    python examples/make_scored_example.py

- ``examples/scored_pool/``: 150 computed clinical questions (nothing is taken from any
  benchmark): 50 single-choice dosing items, 50 open BMI items answered in free text
  with a numeric final answer (scores 0..2 by their rubric: a judge's points; the
  reference metric checks the number alone and gives 0 or 2), and 50 open infusion
  items whose explanation is graded against a reference (scores 0..4). No parameters yet:
  ``cat calibrate --model graded --pool`` adds them.
- ``examples/scored_responses.jsonl``: 40 simulated LLMs' scores, 10% unanswered,
  drawn from a graded response model (3PL for the single-choice items) with the true
  parameters in ``examples/true_scored_params.csv``.
- ``examples/scored_new_models.jsonl``: 3 further models' scores on every item, to assess
  by replay.

Seeded, so the output is the same each run.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np

from cat.engine.simulation import draw_scores
from irt.polytomous import ItemType, PolytomousParams
from irt.polytomous_responses import PolytomousResponses
from itempool.formats.polytomous_params import write_polytomous_params
from itempool.formats.responses import write_scored_jsonl

SEED = 20261124
HERE = Path(__file__).resolve().parent
POOL = HERE / "scored_pool"
LETTERS = "ABCD"
N_EACH = 50


def _dosing(rng: random.Random, k: int) -> dict[str, object]:
    weight, dose = rng.randint(40, 110), rng.choice([2, 5, 10, 15])
    right = weight * dose
    values = [right, right * 2, right // 2, round(right * 1.1)]
    rng.shuffle(values)
    return {
        "id": f"dose{k:03d}",
        "scenario": "dosing",
        "question": f"A patient weighs {weight} kg and the drug is dosed at {dose} mg/kg. "
        "What single dose should be given?",
        "options": {LETTERS[j]: f"{v} mg" for j, v in enumerate(values)},
        "answer": LETTERS[values.index(right)],
    }


def _bmi(rng: random.Random, k: int) -> dict[str, object]:
    weight, height = rng.randint(45, 120), rng.randint(150, 195)
    bmi = round(weight / (height / 100) ** 2, 1)
    return {
        "id": f"bmi{k:03d}",
        "scenario": "bmi",
        "type": "open",
        "question": f"An adult weighs {weight} kg and is {height} cm tall. Work out the "
        "body-mass index and give it to one decimal.",
        "references": [f"BMI = {weight} / {height / 100:.2f}² = {bmi} kg/m²"],
        "numeric_answer": {"value": bmi, "abs_tol": 0.1},
        "rubric": "One point for the formula with the patient's numbers, one for the value.",
        "max_score": 2,
    }


def _infusion(rng: random.Random, k: int) -> dict[str, object]:
    volume = rng.choice([250, 500, 750, 1000, 1500, 2000])
    hours = rng.choice([2, 3, 4, 6, 8, 12, 24])
    drops = rng.choice([15, 20, 60])
    rate = round(volume / hours, 1)
    per_minute = round(volume * drops / (hours * 60))
    return {
        "id": f"inf{k:03d}",
        "scenario": "infusion",
        "type": "open",
        "question": f"{volume} mL of saline must run over {hours} hours through a giving set "
        f"of {drops} drops/mL. Explain how to set the infusion: the pump rate in mL/h and "
        "the drip rate in drops per minute.",
        "references": [
            f"The pump rate is {volume} mL / {hours} h = {rate} mL/h; by gravity, "
            f"{volume} mL × {drops} drops/mL / {hours * 60} min = {per_minute} drops per minute."
        ],
        "rubric": "Full marks need both rates with their working; one rate right earns half.",
        "max_score": 4,
    }


def _true_params(items: list[dict[str, object]], rng: np.random.Generator) -> PolytomousParams:
    """A graded item per open question (3PL, c = 0.2, per single-choice one), in
    slope-intercept form; each open item's steps at least 0.3 apart around a N(0, 1)
    location, so that every score is given now and then."""
    kinds, slopes, thresholds, c = [], [], [], []
    for item in items:
        a = float(rng.lognormal(0.0, 0.3))
        if item.get("type") == "open":
            steps = np.cumsum(0.3 + rng.exponential(0.4, int(str(item["max_score"]))))
            b = rng.normal() + steps - steps.mean()
            kinds.append(ItemType.GRADED)
            thresholds.append(list(-a * b))
            c.append(0.0)
        else:
            kinds.append(ItemType.THREE_PL)
            thresholds.append([float(-a * rng.normal())])
            c.append(0.2)
        slopes.append(a)
    ids = [str(item["id"]) for item in items]
    return PolytomousParams.create(kinds, slopes, thresholds, c, item_ids=ids)


def _scores(
    params: PolytomousParams, names: list[str], rng: np.random.Generator, missing: float
) -> PolytomousResponses:
    theta = np.sort(rng.normal(size=len(names)))
    n = len(names)
    items = np.tile(np.arange(params.n_items), n)
    values = draw_scores(params, np.repeat(theta, params.n_items), items, rng)
    values = values.reshape(n, params.n_items)
    values[rng.random(values.shape) < missing] = np.nan
    return PolytomousResponses.from_array(
        values,
        subject_ids=names,
        item_ids=params.item_ids,
        n_categories=[int(k) for k in params.n_categories],
    )


def main() -> None:
    rng = random.Random(SEED)
    items: list[dict[str, object]] = []
    seen: set[object] = set()
    for make in (_dosing, _bmi, _infusion):
        for k in range(N_EACH):
            item = make(rng, k)
            while item["question"] in seen:  # the local server tells items apart by it
                item = make(rng, k)
            seen.add(item["question"])
            items.append(item)
    POOL.mkdir(exist_ok=True)
    manifest = {
        "name": "scored-example",
        "version": "1",
        "language": "en",
        "scenarios": ["dosing", "bmi", "infusion"],
        "note": "computed clinical questions: single choice, and open answers scored 0..m",
    }
    (POOL / "pool.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    lines = [json.dumps(item, ensure_ascii=False) for item in items]
    (POOL / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    draws = np.random.default_rng(SEED)
    params = _true_params(items, draws)
    write_polytomous_params(params, HERE / "true_scored_params.csv")
    names = [f"model-{k + 1:02d}" for k in range(40)]
    write_scored_jsonl(_scores(params, names, draws, 0.1), HERE / "scored_responses.jsonl")
    new = ["new-strong", "new-middle", "new-weak"]
    write_scored_jsonl(_scores(params, new, draws, 0.0), HERE / "scored_new_models.jsonl")


if __name__ == "__main__":
    main()
