"""``cat.pools.calibration_job.calibrate`` on the shipped example: the warnings it gives."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from cat.pools.calibration_job import calibrate
from irt.errors import DataWarning
from irt.priors import ItemPriors

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "responses.jsonl"


def test_a_2pl_without_priors_warns_of_estimates_that_ran_off(tmp_path: Path) -> None:
    # 40 subjects: without priors the 2PL sends a slope to 30 and difficulties to ±18.
    with pytest.warns(DataWarning) as caught:
        outcome = calibrate(EXAMPLE, model="2pl", out=tmp_path / "p.csv")
    ran_off = [str(w.message) for w in caught if "ran off" in str(w.message)]
    assert len(ran_off) == 1
    assert ran_off[0].startswith(
        "25 of 300 items have estimates that ran off (|b| > 6, a > 6 or a < 0), worst "
        "q0049 (a = 29.98, b = -1.80)"
    )
    assert ran_off[0].endswith(
        "fit with priors on a and b (cat calibrate --priors), or on more subjects"
    )
    assert outcome.report.priors == {}


def test_a_2pl_under_priors_stays_in_bounds(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        outcome = calibrate(EXAMPLE, model="2pl", out=tmp_path / "p.csv", priors=ItemPriors())
    assert set(outcome.report.priors) == {"a", "b"}
    assert outcome.params.a.max() < 6 and abs(outcome.params.b).max() < 6


@pytest.mark.parametrize("family", ["3pl", "graded"])
def test_subjects_are_scored_only_when_something_reads_their_abilities(
    tmp_path: Path, family: str
) -> None:
    source = EXAMPLE if family == "3pl" else EXAMPLE.with_name("scored_responses.jsonl")
    out = tmp_path / "p.csv"
    scored = calibrate(source, model=family, out=out)
    skipped = calibrate(source, model=family, out=out, score_subjects=False)
    asked = calibrate(
        source, model=family, out=out, score_subjects=False, abilities=tmp_path / "theta.csv"
    )
    assert scored.abilities is not None and skipped.abilities is None
    assert asked.abilities is not None
    assert list(asked.abilities.theta) == list(scored.abilities.theta)
    assert (tmp_path / "theta.csv").exists()
    assert skipped.report.loglik == scored.report.loglik
