"""Generate ``examples/responses.jsonl``: 40 simulated LLMs x 300 questions, 10% unanswered.

The LLM regime in miniature (few subjects, many items, some missing answers), drawn from a
3PL with a ~ LogNormal(0, 0.3), b ~ N(0, 1), c ~ U(0, 0.25), θ ~ N(0, 1). The true
parameters are written beside it so that a fit can be compared with the truth.

    python examples/make_example.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irt.responses import ResponseMatrix
from irt.simulate import random_params, simulate_responses
from itempool.formats.params import write_params
from itempool.formats.responses import write_jsonl

SEED = 2026
HERE = Path(__file__).resolve().parent


def main() -> None:
    rng = np.random.default_rng(SEED)
    params = random_params(300, rng, "3pl")
    params = type(params)(
        item_ids=tuple(f"q{j + 1:04d}" for j in range(params.n_items)),
        a=params.a,
        b=params.b,
        c=params.c,
        d=params.d,
        model=params.model,
    )
    theta = np.sort(rng.normal(size=40))
    data = simulate_responses(params, theta, rng, missing_rate=0.1)
    data = ResponseMatrix(
        subject_ids=tuple(f"model-{k + 1:02d}" for k in range(40)),
        item_ids=params.item_ids,
        values=data.values,
    )
    write_jsonl(data, HERE / "responses.jsonl")
    write_params(params, HERE / "true_params.csv")


if __name__ == "__main__":
    main()
