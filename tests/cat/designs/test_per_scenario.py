import numpy as np

from cat.designs.per_scenario import scenario_accuracy, scenario_masks


def test_accuracy_per_scenario_mixes_answers_and_expectations() -> None:
    masks = scenario_masks((0, 0, 1, 1, 2))
    assert masks.shape == (3, 5) and masks.sum() == 5
    can = np.array([[True, True, True, True, False]])
    given = np.array([[True, False, True, False, False]])
    right = np.array([[1.0, 0.0, 0.0, 1.0, 1.0]])
    expected = np.array([[0.9, 0.4, 0.2, 0.6, 0.5]])
    out = scenario_accuracy(masks, can, given, right, expected)
    # scenario 0: answer 1 + expected 0.4 over 2; scenario 1: 0 + 0.6 over 2; 2: none.
    np.testing.assert_allclose(out[0, :2], [0.7, 0.3])
    assert np.isnan(out[0, 2])
    # Nothing given and the answers as expectations: the true accuracy.
    truth = scenario_accuracy(masks, can, np.zeros_like(given), right, right)
    np.testing.assert_allclose(truth[0, :2], [0.5, 0.5])
