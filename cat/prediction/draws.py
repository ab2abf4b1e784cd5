"""``cat validate --train-size K --splits S``: the replay validation over S random draws
of K training subjects, every other subject held out each time.

The pools this project is built for are calibrated on a few dozen participants. One
split of so few says little about the next set of references, and the spread between
draws says how little: ``cat.prediction.draw_metrics`` reports each row's figures as
their mean and sd over the draws. Draw 1 is the split ``--holdout`` draws with the
same seed and as many subjects held out; draw s comes from the seed sequence (seed, s),
so asking for more draws never changes the first ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cat.errors import CatError
from cat.prediction.predictions import Predictions
from cat.prediction.validation import Progress, check_train_size, validate
from irt.models import ModelKind
from irt.responses import ResponseMatrix


def draw_generators(seed: int, n_splits: int) -> list[np.random.Generator]:
    """One generator per draw: the first as a single validation with ``seed`` has it."""
    return [np.random.default_rng(seed if s == 0 else [seed, s]) for s in range(n_splits)]


def validate_draws(
    responses: ResponseMatrix,
    model: ModelKind | str,
    policies: list[str],
    lengths: list[int],
    seed: int,
    train_size: int,
    n_splits: int,
    progress: Progress | None = None,
    **options: Any,
) -> list[list[Predictions]]:
    """``cat.prediction.validation.validate`` on ``n_splits`` random draws of
    ``train_size`` training subjects, the rest held out: each draw's predictions.
    ``options`` are that function's keyword arguments (repeats, scenario, ...)."""
    if n_splits < 1:
        raise CatError(f"--splits must be at least 1, got {n_splits}")
    check_train_size(train_size, responses.n_subjects)
    out = []
    for s, rng in enumerate(draw_generators(seed, n_splits)):

        def told(what: str, done: float, s: int = s) -> None:
            # Each draw is one split: say which draw instead.
            if progress is not None:
                what = what.removeprefix("split 1 of 1: ")
                progress(f"split {s + 1} of {n_splits}: {what}", (s + done) / n_splits)

        out.append(
            validate(
                responses,
                model,
                policies,
                lengths,
                rng,
                holdout=None,
                progress=told,
                train_size=train_size,
                **options,
            )
        )
    if progress is not None:
        progress("done", 1.0)
    return out
