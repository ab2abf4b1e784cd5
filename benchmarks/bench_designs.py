"""Cost of the reference designs (``cat.designs``) in ``cat assess``: one selection step,
and the whole computation of a 250-item test (fitting the references' models included,
the model's answers excluded), on simulated references.

    python benchmarks/bench_designs.py                  # 1,000 references x 1,500 items
    python benchmarks/bench_designs.py --references 300 --items 735

Issue 13's targets: a selection step under 5 ms with 1,000 references x 1,500 items; the
whole default assessment computation under 5 s for 250 items.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from cat.assessment.session import AssessmentSession, SessionConfig
from cat.designs.models import ReferenceModels
from irt.simulate import random_params, simulate_responses

SEED = 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--references", type=int, default=1000)
    parser.add_argument("--items", type=int, default=1500)
    parser.add_argument("--length", type=int, default=250)
    args = parser.parse_args()
    rng = np.random.default_rng(SEED)
    params = random_params(args.items, rng, "2pl")
    refs = simulate_responses(params, rng.normal(size=args.references), rng)
    prob = 1 / (1 + np.exp(-params.a * (0.3 - params.b)))
    answers = (rng.random(args.items) < prob).astype(int)
    index = {item: j for j, item in enumerate(params.item_ids)}
    print(f"{args.references:,} references x {args.items:,} items, {args.length} items asked")
    t0 = time.perf_counter()
    models = ReferenceModels.fit(refs)
    fit = time.perf_counter() - t0
    print(f"fitting the references' models (low rank, K = {models.low_rank.dims}): {fit:.2f} s")
    for design in ("mixture", "low-rank"):
        config = SessionConfig(design=design, max_items=args.length)
        t0 = time.perf_counter()
        session = AssessmentSession(params, config, reference_models=models)
        steps = []
        while not session.done:
            s0 = time.perf_counter()
            (item,) = session.next_items()
            steps.append(time.perf_counter() - s0)
            session.record(item, int(answers[index[item]]))
        assert session.design is not None
        value, _ = session.design.predicted()
        total = time.perf_counter() - t0
        print(
            f"{design:>9}: selection step median {1000 * np.median(steps):.1f} ms "
            f"(max {1000 * np.max(steps):.1f}); the test {total:.2f} s, with the fit "
            f"{total + fit:.2f} s; predicted {value:.3f}, true {answers.mean():.3f}"
        )


if __name__ == "__main__":
    main()
