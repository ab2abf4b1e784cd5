"""Tests of irt.checks: data-quality warnings on a response matrix."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from irt.checks import check_responses, warn_about, warn_runaway_estimates
from irt.errors import DataWarning
from irt.models import ItemParams, ModelKind
from irt.responses import MISSING, ResponseMatrix

M = MISSING


def _matrix(rows: list[list[int]]) -> ResponseMatrix:
    values = np.array(rows, dtype=np.int8)
    n, j = values.shape
    subjects = tuple(f"m{k + 1}" for k in range(n))
    items = tuple(f"q{k + 1}" for k in range(j))
    return ResponseMatrix(subjects, items, values)


def test_clean_matrix_has_no_messages() -> None:
    assert check_responses(_matrix([[1, 0, 1], [0, 1, 0], [1, 1, 0]])) == []


def test_the_documented_example() -> None:
    values = np.tile(np.array([[1, 0], [0, 1]], dtype=np.int8), (1, 60))
    values[:, [6, 18, 43]] = MISSING
    items = tuple(f"q{k + 1:04d}" for k in range(120))
    m = ResponseMatrix(("a", "b"), items, values)
    assert check_responses(m) == [
        "3 of 120 items were answered by nobody (e.g. q0007, q0019, q0044)"
    ]


def test_items_nobody_answered() -> None:
    m = _matrix([[1, M, 0], [0, M, 1]])
    assert check_responses(m) == ["1 of 3 items was answered by nobody (e.g. q2)"]


def test_items_all_right_and_all_wrong_among_those_who_answered() -> None:
    m = _matrix([[1, 0, 1, 0], [M, M, 0, 1], [1, 0, 1, 1]])
    assert check_responses(m) == [
        "1 of 4 items was answered correctly by everyone who answered it (e.g. q1)",
        "1 of 4 items was answered wrongly by everyone who answered it (e.g. q2)",
    ]


def test_subjects_without_answers_all_right_and_all_wrong() -> None:
    m = _matrix([[1, 0, 1], [M, M, M], [1, 1, M], [0, M, 0], [0, 1, 1]])
    assert check_responses(m) == [
        "1 of 5 subjects answered no item (e.g. m2)",
        "1 of 5 subjects got every item they answered right (e.g. m3)",
        "1 of 5 subjects got every item they answered wrong (e.g. m4)",
    ]


def test_plural_messages_name_at_most_five_examples() -> None:
    values = np.full((2, 10), MISSING, dtype=np.int8)
    values[:, :2] = [[1, 0], [0, 1]]
    message = check_responses(ResponseMatrix(("a", "b"), tuple("abcdefghij"), values))[0]
    assert message == "8 of 10 items were answered by nobody (e.g. c, d, e, f, g)"


def test_all_right_matrix_flags_every_item_and_subject() -> None:
    messages = check_responses(_matrix([[1, 1], [1, 1]]))
    assert messages == [
        "2 of 2 items were answered correctly by everyone who answered them (e.g. q1, q2)",
        "2 of 2 subjects got every item they answered right (e.g. m1, m2)",
    ]


def test_single_item_matrix_uses_the_singular_noun() -> None:
    assert check_responses(_matrix([[0], [0]]))[0] == (
        "1 of 1 item was answered wrongly by everyone who answered it (e.g. q1)"
    )


def test_warn_about_issues_one_data_warning_per_message() -> None:
    m = _matrix([[1, M, 0], [0, M, 1], [1, M, 1]])
    with pytest.warns(DataWarning) as record:
        warn_about(m)
    assert [str(w.message) for w in record] == check_responses(m)
    assert len(record) == 2
    assert record[0].filename == __file__  # stacklevel points at the caller


def test_warn_about_is_silent_on_clean_data() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_about(_matrix([[1, 0], [0, 1]]))


def _params(a: list[float], b: list[float]) -> ItemParams:
    n = len(a)
    ids = tuple(f"q{k + 1}" for k in range(n))
    return ItemParams(ids, np.array(a), np.array(b), np.zeros(n), np.ones(n), ModelKind.TWO_PL)


def test_estimates_that_ran_off_warn_with_the_worst_items_and_the_remedy() -> None:
    # q2 slope too steep, q3 and q5 beyond the grid, q4 negative; q1 and q6 are fine.
    params = _params([1.0, 29.98, 0.09, -0.44, 0.5, 2.0], [0.0, -1.81, 18.78, 0.3, -7.0, 5.9])
    with pytest.warns(DataWarning) as caught:
        warn_runaway_estimates(params, "fit with priors")
    assert len(caught) == 1
    assert str(caught[0].message) == (
        "4 of 6 items have estimates that ran off (|b| > 6, a > 6 or a < 0), worst "
        "q2 (a = 29.98, b = -1.81), q3 (a = 0.09, b = 18.78), q5 (a = 0.50, b = -7.00): "
        "the data cannot place them; fit with priors"
    )


def test_estimates_within_bounds_do_not_warn() -> None:
    params = _params([0.4, 1.2, 5.9], [-5.9, 0.0, 5.9])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_runaway_estimates(params, "fit with priors")


def test_answer_counts_taken_in_blocks_of_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    import irt.responses

    rng = np.random.default_rng(3)
    values = rng.choice(np.array([M, 0, 1], dtype=np.int8), size=(23, 7), p=[0.2, 0.4, 0.4])
    matrix = ResponseMatrix(
        tuple(f"m{k}" for k in range(23)), tuple(f"q{k}" for k in range(7)), values
    )
    monkeypatch.setattr(irt.responses, "_COUNT_BLOCK_CELLS", 3 * 7)  # 3 rows a block
    counts = matrix.answer_counts()
    np.testing.assert_array_equal(counts.item_right, (values == 1).sum(axis=0))
    np.testing.assert_array_equal(counts.item_wrong, (values == 0).sum(axis=0))
    np.testing.assert_array_equal(counts.subject_right, (values == 1).sum(axis=1))
    np.testing.assert_array_equal(counts.subject_wrong, (values == 0).sum(axis=1))
    assert counts.n_answers == int((values != M).sum())
    answered = (values != M).sum(axis=1)
    expected = np.where(answered > 0, (values == 1).sum(axis=1) / np.maximum(answered, 1), np.nan)
    np.testing.assert_array_equal(matrix.accuracy(), expected)
