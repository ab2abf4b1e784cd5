"""Write ``examples/mini_pool/``: 24 clinical calculation questions with computed answers.

    python examples/make_mini_pool.py

A small pool for trying ``cat synth`` against a local server; every answer is computed
here (nothing is taken from any benchmark). Seeded, so the output is the same each run.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent / "mini_pool"
LETTERS = "ABCD"


def options_for(
    right: float, rng: random.Random, unit: str, digits: int
) -> tuple[dict[str, str], str]:
    """The right value and three distractors (common slips: ×2, ÷2, off by 10%)."""
    values = {round(right, digits)}
    for factor in (2.0, 0.5, 1.1, 0.9, 10.0):
        if len(values) == 4:
            break
        values.add(round(right * factor, digits))
    ordered = sorted(values)
    rng.shuffle(ordered)
    options = {LETTERS[k]: f"{v:g} {unit}" for k, v in enumerate(ordered)}
    return options, LETTERS[ordered.index(round(right, digits))]


def main() -> None:
    rng = random.Random(20261122)
    items = []
    for _ in range(8):
        weight, dose = rng.randint(40, 110), rng.choice([2, 5, 10, 15])
        options, answer = options_for(weight * dose, rng, "mg", 0)
        items.append(
            (
                "dosing",
                f"A patient weighs {weight} kg. The drug is dosed at {dose} mg/kg. "
                "What single dose should be given?",
                options,
                answer,
            )
        )
    for _ in range(8):
        weight, height = rng.randint(45, 120), rng.randint(150, 195)
        bmi = weight / (height / 100) ** 2
        options, answer = options_for(bmi, rng, "kg/m²", 1)
        items.append(
            (
                "bmi",
                f"What is the body-mass index of an adult who weighs {weight} kg "
                f"and is {height} cm tall?",
                options,
                answer,
            )
        )
    pumps = rng.sample([(v, h) for v in (250, 500, 1000, 1500) for h in (2, 4, 6, 8, 12)], 8)
    for volume, hours in pumps:
        options, answer = options_for(volume / hours, rng, "mL/h", 1)
        items.append(
            (
                "infusion",
                f"{volume} mL of saline must run over {hours} hours. "
                "At what rate should the pump be set?",
                options,
                answer,
            )
        )
    questions = [q for _, q, _, _ in items]
    if len(set(questions)) != len(questions):
        raise SystemExit("two questions came out the same: change the seed")
    HERE.mkdir(exist_ok=True)
    (HERE / "pool.json").write_text(
        json.dumps(
            {
                "name": "mini",
                "version": "1",
                "language": "en",
                "scenarios": ["dosing", "bmi", "infusion"],
                "note": "24 computed calculation questions for trying cat synth",
            },
            indent=2,
        )
        + "\n"
    )
    with (HERE / "items.jsonl").open("w", encoding="utf-8") as fh:
        for n, (scenario, question, options, answer) in enumerate(items):
            record = {
                "id": f"mini{n:03d}",
                "scenario": scenario,
                "type": "single",
                "question": question,
                "options": options,
                "answer": answer,
            }
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
