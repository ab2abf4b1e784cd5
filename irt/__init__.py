"""Item response theory: 1PL–4PL models, calibration (EM; Bayesian via pyro) and scoring.

Imports nothing of the other packages of this project.
"""

from irt.bayes import BayesCalibrator
from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning, DataWarning, IRTError, ParamsError, ResponseDataError
from irt.estep import marginal_log_likelihood
from irt.models import (
    ItemParams,
    ModelKind,
    information,
    log_likelihood,
    probability,
    test_information,
)
from irt.params_io import read_params, write_params
from irt.priors import ItemPriors
from irt.readers import read_responses, write_csv, write_jsonl
from irt.responses import ResponseMatrix
from irt.scoring import Abilities, AbilityMethod, score_abilities

__all__ = [
    "Abilities",
    "AbilityMethod",
    "BayesCalibrator",
    "ConvergenceWarning",
    "DataWarning",
    "EMCalibrator",
    "IRTError",
    "ItemParams",
    "ItemPriors",
    "ModelKind",
    "ParamsError",
    "ResponseDataError",
    "ResponseMatrix",
    "information",
    "log_likelihood",
    "marginal_log_likelihood",
    "probability",
    "read_params",
    "read_responses",
    "score_abilities",
    "test_information",
    "write_csv",
    "write_jsonl",
    "write_params",
]
