"""Write ``examples/similarity.jsonl``: 40 simulated LLMs' similarity scores in [0, 1]
(as ROUGE-L of a free-text answer against a reference) on 80 open items, 10% missing.

Drawn from the Beta IRT model (``irt.continuous``: a ~ LogNormal(0, 0.3), d ~ N(0, 1),
τ ~ U(1, 3), θ ~ N(0, 1)) and rounded to 3 decimals, as a metric reports them, so some
scores are exactly 0 or 1. The true parameters go to ``examples/true_similarity_params.csv``.

    python examples/make_similarity_example.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irt.continuous import ContinuousParams
from irt.continuous_responses import ContinuousResponses
from itempool.formats.continuous_params import write_continuous_params
from itempool.formats.scores import write_continuous_jsonl

SEED = 20261124
HERE = Path(__file__).resolve().parent


def main() -> None:
    rng = np.random.default_rng(SEED)
    n_items = 80
    truth = ContinuousParams.create(
        "beta",
        rng.lognormal(0.0, 0.3, n_items),
        rng.normal(0.0, 1.0, n_items),
        rng.uniform(1.0, 3.0, n_items),
        item_ids=[f"open{j + 1:03d}" for j in range(n_items)],
    )
    theta = np.sort(rng.normal(size=40))
    scores = np.round(truth.simulate(theta, rng), 3)
    scores[rng.random(scores.shape) < 0.1] = np.nan
    responses = ContinuousResponses.from_array(
        scores,
        subject_ids=[f"model-{k + 1:02d}" for k in range(40)],
        item_ids=truth.item_ids,
    )
    write_continuous_jsonl(responses, HERE / "similarity.jsonl")
    write_continuous_params(truth, HERE / "true_similarity_params.csv")


if __name__ == "__main__":
    main()
