"""Write ``examples/ward_questions.csv``: 60 clinical calculation questions, as a team's
own benchmark often comes (one row a question, options in columns A–D, the answer as a
letter, a subject column, no ids).

    python examples/make_ward_benchmark.py

The file ``cat pool create`` turns into a calibrated pool in the README and the guide
"Your own benchmark". Every answer is computed here; seeded, so the file is the same
each run.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

from make_mini_pool import options_for

OUT = Path(__file__).resolve().parent / "ward_questions.csv"


def main() -> None:
    rng = random.Random(20261129)
    rows: list[tuple[str, str, dict[str, str], str]] = []
    doses = rng.sample([(w, d) for w in range(40, 111) for d in (2, 5, 10, 15)], 20)
    for weight, dose in doses:
        options, answer = options_for(weight * dose, rng, "mg", 0)
        question = (
            f"A patient weighs {weight} kg and the drug is dosed at {dose} mg/kg. "
            "What single dose should be given?"
        )
        rows.append(("dosing", question, options, answer))
    bodies = rng.sample([(w, h) for w in range(45, 121) for h in range(150, 196)], 20)
    for weight, height in bodies:
        options, answer = options_for(weight / (height / 100) ** 2, rng, "kg/m²", 1)
        question = f"An adult weighs {weight} kg and is {height} cm tall. What is the BMI?"
        rows.append(("bmi", question, options, answer))
    pumps = rng.sample([(v, h) for v in (100, 250, 500, 750, 1000, 1500) for h in range(1, 13)], 20)
    for volume, hours in pumps:
        options, answer = options_for(volume / hours, rng, "mL/h", 1)
        question = f"{volume} mL must run over {hours} hours. At what rate is the pump set?"
        rows.append(("infusion", question, options, answer))
    with OUT.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["question", "A", "B", "C", "D", "answer", "subject"])
        for subject, question, options, answer in rows:
            writer.writerow([question, *(options[k] for k in "ABCD"), answer, subject])


if __name__ == "__main__":
    main()
