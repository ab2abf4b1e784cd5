"""``cat.calibrate`` of the graded models: graded, gpcm and sequential calibration of
scores 0..m from a file — recovery, the report, the parameter and ability files, R
mirt's Science figures, and each bad input refused in one line."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from cat.errors import CatError
from cat.pools import graded_calibration
from cat.pools.calibration_job import CalibrationOutcome, calibrate
from cat.pools.graded_calibration import MIN_SUBJECTS
from irt.polytomous import ItemType, PolytomousParams
from irt.polytomous_em import PolytomousCalibrator
from irt.polytomous_estep import polytomous_log_likelihood
from irt.polytomous_priors import PolytomousPriors
from irt.polytomous_responses import MISSING, PolytomousResponses
from itempool.formats.polytomous_params import read_polytomous_params
from itempool.formats.responses import read_scored_responses, write_scored_jsonl

N_GRADED, N_BINARY = 8, 4
CONTRACT_KEYS = {
    "model",
    "method",
    "n_subjects",
    "n_items",
    "loglik",
    "n_iter",
    "converged",
    "seconds",
}
REPORT_KEYS = CONTRACT_KEYS | {
    "n_responses",
    "missing_share",
    "aic",
    "bic",
    "n_parameters",
    "item_types",
    "categories",
    "parameters",
    "priors",
    "standard_errors",
    "seed",
    "package_version",
    "created",
    "input",
}
# mirt(Science, 1)'s asserted coefficients (per item a1, d1, d2, d3); see
# ../shared/data/human/polytomous/README.md, id science_graded_1f.
MIRT_SCIENCE_GRADED = [
    [1.041, 4.864, 2.64, -1.466],
    [1.226, 2.924, 0.901, -2.266],
    [2.296, 5.238, 2.216, -1.965],
    [1.095, 3.348, 0.992, -1.688],
]
MIRT_SCIENCE_SEQUENTIAL_LOGLIK = -1609.768  # asserted to 1e-4 relative
# PolytomousPriors.weakly_informative, the default, as the report describes it.
WEAK_PRIORS = {
    "a": {"dist": "lognormal", "meanlog": 0.0, "sdlog": 0.5},
    "d": {"dist": "normal", "mean": 0.0, "sd": 3.0},
}
BETA_C = {"c": {"dist": "beta", "alpha": 3.0, "beta": 15.0}}


def calibrate_scored(responses: Path, **settings: object) -> CalibrationOutcome:
    """``cat.calibrate`` with the graded model unless another is given."""
    return calibrate(responses, **{"model": "graded", **settings})  # type: ignore[arg-type]


def truth(seed: int = 3, kind: str = "graded") -> PolytomousParams:
    """``N_GRADED`` items of ``kind`` with 4 categories, then ``N_BINARY`` 2PL items."""
    rng = np.random.default_rng(seed)
    n = N_GRADED + N_BINARY
    a = rng.lognormal(0.1, 0.4, n)
    d: list[list[float]] = [
        sorted(rng.normal(0.0, 0.4, 3) + np.array([1.4, 0.0, -1.4]), reverse=True)
        for _ in range(N_GRADED)
    ]
    d += [[float(x)] for x in rng.normal(0.0, 0.8, N_BINARY)]
    types = [kind] * N_GRADED + ["2PL"] * N_BINARY
    ids = [f"g{j:02d}" for j in range(N_GRADED)] + [f"b{j:02d}" for j in range(N_BINARY)]
    return PolytomousParams.create(types, a, d, item_ids=ids)


def simulate(
    params: PolytomousParams, n: int, seed: int = 4, missing: float = 0.05
) -> tuple[PolytomousResponses, np.ndarray]:
    """Scores drawn from ``params.probabilities`` for θ ~ N(0, 1), some left out."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n)
    cumulative = params.probabilities(theta).cumsum(axis=-1)  # (n, J, K)
    scores = (cumulative < rng.random((n, params.n_items, 1))).sum(axis=-1)
    scores[rng.random(scores.shape) < missing] = MISSING
    ids = [f"m{i:04d}" for i in range(n)]
    data = PolytomousResponses.from_array(scores, subject_ids=ids, item_ids=params.item_ids)
    return data, theta


def write_simulated(path: Path, n: int = 600, kind: str = "graded") -> tuple[Path, np.ndarray]:
    """Simulated scores written as JSONL; the true parameters' slopes beside."""
    params = truth(kind=kind)
    data, _ = simulate(params, n)
    assert data.n_categories == tuple(params.n_categories)  # every category reached
    write_scored_jsonl(data, path)
    return path, params.a


@pytest.fixture
def scores(tmp_path: Path) -> Path:
    return write_simulated(tmp_path / "scores.jsonl")[0]


def test_recovers_the_items_and_writes_what_is_asked(tmp_path: Path) -> None:
    path, true_a = write_simulated(tmp_path / "scores.jsonl")
    out, report, abilities = tmp_path / "p.csv", tmp_path / "r.json", tmp_path / "a.csv"
    outcome = calibrate_scored(
        path, model="graded", out=out, report=report, abilities=abilities, seed=11
    )
    params = outcome.params
    assert params.item_types == tuple([ItemType.GRADED] * N_GRADED + [ItemType.TWO_PL] * N_BINARY)
    r_a = np.corrcoef(params.a, true_a)[0, 1]
    true_d = truth().d
    r_d = np.corrcoef(params.d[~np.isnan(true_d)], true_d[~np.isnan(true_d)])[0, 1]
    assert r_a > 0.95 and r_d > 0.97  # measured 0.991 and 0.997
    assert outcome.written == [out, abilities, report]

    written = read_polytomous_params(out)  # the CSV round-trips
    assert written.item_ids == params.item_ids and written.item_types == params.item_types
    np.testing.assert_array_equal(written.a, params.a)
    np.testing.assert_array_equal(written.d, params.d)
    assert written.se_a is not None and np.all(written.se_a > 0)

    with abilities.open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["subject_id", "theta", "se", "method", "n_answered", "fallback"]
    data = read_scored_responses(path)
    assert [r["subject_id"] for r in rows] == list(data.subject_ids)
    assert [int(r["n_answered"]) for r in rows] == data.observed.sum(axis=1).tolist()
    assert {r["method"] for r in rows} == {"eap"} and {r["fallback"] for r in rows} == {"0"}
    assert outcome.abilities is not None
    np.testing.assert_allclose([float(r["theta"]) for r in rows], outcome.abilities.theta)


def test_the_report_holds_the_fit_and_its_provenance(scores: Path, tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    outcome = calibrate_scored(scores, out=tmp_path / "p.csv", report=report, seed=11)
    fit = json.loads(report.read_text())
    assert set(fit) >= REPORT_KEYS
    assert fit == json.loads(outcome.report.model_dump_json())
    assert fit["model"] == "graded" and fit["method"] == "em" and fit["seed"] == 11
    assert fit["n_subjects"] == 600 and fit["n_items"] == N_GRADED + N_BINARY
    assert fit["n_responses"] == round((1 - fit["missing_share"]) * 600 * 12)
    assert 0.03 < fit["missing_share"] < 0.07 and fit["converged"] is True
    assert fit["item_types"] == {"2PL": N_BINARY, "graded": N_GRADED}
    assert fit["categories"] == {"2": N_BINARY, "4": N_GRADED}
    assert fit["n_parameters"] == 4 * N_GRADED + 2 * N_BINARY
    k, n = fit["n_parameters"], 600
    assert fit["aic"] == pytest.approx(2 * k - 2 * fit["loglik"])
    assert fit["bic"] == pytest.approx(k * np.log(n) - 2 * fit["loglik"])
    assert set(fit["parameters"]) == {"a", "d"}  # no c without 3PL items
    assert set(fit["parameters"]["a"]) == {"mean", "sd", "min", "max"}
    assert fit["priors"] == WEAK_PRIORS and fit["logpost"] < fit["loglik"]
    assert fit["standard_errors"] == "xpd"  # "auto" on a small pool
    assert fit["settings"]["standard_errors_requested"] == "auto"
    assert fit["input"] == str(scores) and fit["package_version"]
    assert "renumbered_scores" not in fit


def test_the_loglik_is_the_calibrators(scores: Path, tmp_path: Path) -> None:
    outcome = calibrate_scored(scores, model="gpcm", out=tmp_path / "p.csv", standard_errors="none")
    data = read_scored_responses(scores)
    types = [ItemType.GPCM] * N_GRADED + [ItemType.TWO_PL] * N_BINARY
    priors = PolytomousPriors.weakly_informative(types)
    direct = PolytomousCalibrator(types, priors=priors, standard_errors=None).fit(data)
    assert outcome.report.loglik == pytest.approx(direct.loglik_, abs=1e-9)
    assert outcome.report.logpost == pytest.approx(direct.logpost_, abs=1e-9)
    assert outcome.report.standard_errors is None and outcome.params.se_a is None
    with (tmp_path / "p.csv").open() as fh:
        assert next(csv.reader(fh)) == ["item_id", "type", "a", "d1", "d2", "d3", "c"]


@pytest.mark.parametrize("kind", ["gpcm", "sequential"])
def test_other_models_recover_their_own_data(tmp_path: Path, kind: str) -> None:
    path, true_a = write_simulated(tmp_path / "s.jsonl", kind=kind)
    outcome = calibrate_scored(path, model=kind, out=tmp_path / "p.csv", standard_errors="none")
    assert outcome.report.item_types == {"2PL": N_BINARY, kind: N_GRADED}
    assert np.corrcoef(outcome.params.a, true_a)[0, 1] > 0.95  # measured 0.99


def test_guessing_makes_binary_items_3pl_under_the_default_prior(
    scores: Path, tmp_path: Path
) -> None:
    outcome = calibrate_scored(scores, out=tmp_path / "p.csv", guessing=True)
    report = outcome.report
    assert report.item_types == {"3PL": N_BINARY, "graded": N_GRADED}
    assert report.priors == {**WEAK_PRIORS, **BETA_C}
    assert set(report.parameters) == {"a", "d", "c"} and report.parameters["c"]["min"] > 0
    # --no-priors: the 3PL in plain ML, as asked; or any priors given.
    plain = calibrate_scored(scores, out=tmp_path / "p.csv", guessing=True, priors=False)
    assert plain.report.priors == {} and plain.report.logpost == plain.report.loglik
    given = PolytomousPriors.default_for([ItemType.THREE_PL])
    fit = calibrate_scored(scores, out=tmp_path / "p.csv", guessing=True, priors=given)
    assert fit.report.priors == BETA_C


def test_collapse_scores_renumbers_and_records_the_original_scores(tmp_path: Path) -> None:
    params = truth()
    data, _ = simulate(params, 300)
    shifted = np.where(data.values == MISSING, MISSING, data.values + 1)  # scores 1..4
    path = tmp_path / "s.jsonl"
    write_scored_jsonl(PolytomousResponses(data.subject_ids, data.item_ids, shifted), path)
    with pytest.raises(CatError, match="give collapse_scores") as caught:
        calibrate_scored(path, out=tmp_path / "p.csv", priors=False)
    assert "no answer on item 'g00' scores 0 (its scores are 1, 2, 3, 4;" in str(caught.value)
    outcome = calibrate_scored(path, out=tmp_path / "p.csv", collapse_scores=True)
    assert outcome.report.renumbered_scores == {
        **{f"g{j:02d}": [1, 2, 3, 4] for j in range(N_GRADED)},
        **{f"b{j:02d}": [1, 2] for j in range(N_BINARY)},
    }
    assert any(
        n.startswith("scores renumbered on 12 of 12 items") for n in outcome.report.data_notes
    )
    plain = calibrate_scored(_write(data, tmp_path / "0.jsonl"), out=tmp_path / "q.csv")
    assert outcome.report.loglik == pytest.approx(plain.report.loglik, abs=1e-9)


def _write(data: PolytomousResponses, path: Path) -> Path:
    write_scored_jsonl(data, path)
    return path


def test_the_default_priors_fit_a_score_nobody_gave(tmp_path: Path) -> None:
    """As tens of language models leave a score unused on an item: the priors keep it
    in its place, where plain ML refuses the item."""
    data, _ = simulate(truth(), 40)
    values = data.values.copy()
    values[:, 0] = np.where(values[:, 0] == 2, 3, values[:, 0])  # g00: 0, 1, 3
    path = _write(
        PolytomousResponses(data.subject_ids, data.item_ids, values), tmp_path / "s.jsonl"
    )
    outcome = calibrate_scored(path, out=tmp_path / "p.csv")
    assert outcome.params.n_categories[0] == 4 and outcome.report.converged
    assert outcome.params.probabilities([0.0])[0, 0, 2] < 1e-2
    assert any("(e.g. g00: 2)" in n for n in outcome.report.data_notes)
    with pytest.raises(CatError) as caught:
        calibrate_scored(path, out=tmp_path / "p.csv", priors=False)
    assert "no answer on item 'g00' scores 2 (its scores are 0, 1, 3)" in str(caught.value)


def test_auto_leaves_out_the_errors_of_a_large_pool(
    scores: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(graded_calibration, "AUTO_SE_MAX_PARAMETERS", 10)
    outcome = calibrate_scored(scores, out=tmp_path / "p.csv")
    assert outcome.report.standard_errors is None and outcome.params.se_a is None
    assert any("no standard errors: 40 free parameters" in n for n in outcome.report.data_notes)
    forced = calibrate_scored(scores, out=tmp_path / "p.csv", standard_errors="oakes")
    assert forced.report.standard_errors == "oakes" and forced.params.se_a is not None


def test_notes_name_subjects_without_information(tmp_path: Path) -> None:
    data, _ = simulate(truth(), 100)
    values = data.values.copy()
    values[3:, 0] = np.arange(3, 100) % 2 + 1  # neither g00's top nor its lowest score
    values[0] = MISSING
    values[1] = np.array(data.n_categories) - 1  # every top score
    values[2] = 0
    path = _write(
        PolytomousResponses(data.subject_ids, data.item_ids, values), tmp_path / "s.jsonl"
    )
    notes = calibrate_scored(path, out=tmp_path / "p.csv").report.data_notes
    assert "1 of 100 subjects answered no item (e.g. m0000)" in notes
    assert "1 of 100 subjects got the top score on every item they answered (e.g. m0001)" in notes
    assert (
        "1 of 100 subjects got the lowest score on every item they answered (e.g. m0002)" in notes
    )


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"model": "grm"}, CatError, "unknown model 'grm'; choose from 1pl, 2pl, 3pl, 4pl"),
        ({"model": "ideal"}, CatError, "unknown model 'ideal'"),
        ({"scoring": "wle"}, CatError, "scoring wle is not available for graded models"),
        ({"standard_errors": "louis"}, CatError, "unknown standard errors 'louis'"),
        ({"item_types": {"g03": "3PL"}}, CatError, "item 'g03' has 4 score categories; a 3PL"),
        ({"item_types": {"nope": "3PL"}}, CatError, "item types are given for 'nope'"),
        ({"tol": 0.0}, CatError, "tol must be positive"),
    ],
)
def test_bad_settings_are_refused_in_one_line(
    scores: Path, tmp_path: Path, change: dict[str, object], error: type, message: str
) -> None:
    settings: dict[str, object] = {"out": tmp_path / "p.csv", **change}
    with pytest.raises(error) as caught:
        calibrate_scored(scores, **settings)  # type: ignore[arg-type]
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert not (tmp_path / "p.csv").exists()


def test_bad_data_are_refused_in_one_line(tmp_path: Path) -> None:
    cases = {
        "none.jsonl": (None, "no such file"),
        "text.jsonl": ('{"subject_id": "m", "responses": {"q1": "high"}}\n', "line 1"),
        "data.txt": ("1,2\n", "unknown response file type"),
    }
    for name, (content, message) in cases.items():
        path = tmp_path / name
        if content is not None:
            path.write_text(content)
        with pytest.raises(CatError, match=message):
            calibrate_scored(path, out=tmp_path / "p.csv")
    few, _ = simulate(truth(), MIN_SUBJECTS - 1)
    path = _write(few, tmp_path / "few.jsonl")
    with pytest.raises(
        CatError,
        match=f"few.jsonl: 9 subject.s. with answers; a graded "
        f"calibration needs at least {MIN_SUBJECTS}",
    ):
        calibrate_scored(path, out=tmp_path / "p.csv")
    with pytest.raises(CatError, match="does not exist"):
        calibrate_scored(path, out=tmp_path / "no" / "p.csv")


# --- R mirt's Science data ---------------------------------------------------------------


def test_science_graded_is_at_least_mirts_fit(shared_data: Path, tmp_path: Path) -> None:
    """Science (categories 1..4, no id column) renumbered 0..3 without priors, as mirt
    fits it: the log-likelihood is the calibrator's, and not below mirt's at its
    coefficients; the sequential model's is mirt's."""
    path = shared_data / "human" / "polytomous" / "Science.csv"

    def as_mirt(model: str) -> CalibrationOutcome:
        return calibrate_scored(
            path,
            model=model,
            out=tmp_path / "p.csv",
            id_column=False,
            collapse_scores=True,
            priors=False,
        )

    outcome = as_mirt("graded")
    data = read_scored_responses(path, id_column=False).collapsed()
    direct = PolytomousCalibrator(standard_errors=None).fit(data)
    assert outcome.report.loglik == pytest.approx(direct.loglik_, abs=1e-9)
    block = np.array(MIRT_SCIENCE_GRADED)
    mirt = PolytomousParams.create("graded", block[:, 0], block[:, 1:], item_ids=data.item_ids)
    at_mirt = polytomous_log_likelihood(data, mirt)
    assert at_mirt <= outcome.report.loglik < at_mirt + 1e-2
    assert outcome.report.renumbered_scores == {i: [1, 2, 3, 4] for i in data.item_ids}
    sequential = as_mirt("sequential")
    assert sequential.report.loglik == pytest.approx(MIRT_SCIENCE_SEQUENTIAL_LOGLIK, rel=1e-4)


def test_science_under_the_default_priors_keeps_its_scale(
    shared_data: Path, tmp_path: Path
) -> None:
    """Without --collapse-scores the priors fit Science's scores 1..4 as they are, a
    category 0 that nobody is in below them, and the notes say so."""
    path = shared_data / "human" / "polytomous" / "Science.csv"
    outcome = calibrate_scored(path, out=tmp_path / "p.csv", id_column=False)
    assert outcome.report.categories == {"5": 4} and outcome.report.converged
    probabilities = outcome.params.probabilities([0.0])[0]
    assert probabilities[:, 0].max() < 1e-2  # the unused score
    notes = outcome.report.data_notes
    assert any(n.startswith("4 of 4 items have a score below their top one") for n in notes)
    assert any(n.startswith("no answer scores 0: if the scale starts at 1") for n in notes)


@pytest.mark.parametrize(
    ("n_subjects", "expected"),
    [(600, "xpd"), (101, "xpd"), (100, "oakes"), (40, "oakes")],
)
def test_auto_standard_errors_need_more_subjects_than_parameters_for_xpd(
    n_subjects: int, expected: str
) -> None:
    # 20 graded items of 5 categories: 100 free parameters. The cross-product of the
    # subjects' scores has rank at most the number of subjects.
    types = [ItemType.GRADED] * 20
    method, note = graded_calibration._se_method("auto", types, [5] * 20, n_subjects)
    assert (method, note) == (expected, None)
