"""Item response theory: 1PL–4PL models, calibration (EM; Bayesian via pyro) and scoring.

Imports nothing of the other packages of this project. Names are imported on first use,
so that ``import irt.errors`` or ``irt.names`` (which the ``cat`` command line needs
before it knows what to do) does not load numpy and scipy.
"""

from __future__ import annotations

from irt.lazy import lazy_attributes

# A plain name rather than ``typing.TYPE_CHECKING``: type checkers treat any variable of
# this name as true, and at run time the block below imports nothing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from irt.bayes.calibrator import BayesCalibrator
    from irt.em import EMCalibrator
    from irt.errors import (
        ConvergenceWarning,
        DataWarning,
        IRTError,
        ParamsError,
        ResponseDataError,
    )
    from irt.estep import marginal_log_likelihood
    from irt.families import ItemFamily
    from irt.models import ItemParams, information, log_likelihood, probability, test_information
    from irt.names import AbilityMethod, ModelKind
    from irt.parameter_set import ParameterSet
    from irt.priors import ItemPriors
    from irt.responses import ResponseMatrix
    from irt.scoring import Abilities, score_abilities
    from irt.structures import LatentStructure

#: Public name → the module that defines it.
_WHERE: dict[str, str] = {
    "BayesCalibrator": "irt.bayes.calibrator",
    "EMCalibrator": "irt.em",
    "ConvergenceWarning": "irt.errors",
    "DataWarning": "irt.errors",
    "IRTError": "irt.errors",
    "ParamsError": "irt.errors",
    "ResponseDataError": "irt.errors",
    "marginal_log_likelihood": "irt.estep",
    "ItemFamily": "irt.families",
    "ItemParams": "irt.models",
    "information": "irt.models",
    "log_likelihood": "irt.models",
    "probability": "irt.models",
    "test_information": "irt.models",
    "AbilityMethod": "irt.names",
    "ModelKind": "irt.names",
    "ParameterSet": "irt.parameter_set",
    "ItemPriors": "irt.priors",
    "ResponseMatrix": "irt.responses",
    "Abilities": "irt.scoring",
    "score_abilities": "irt.scoring",
    "LatentStructure": "irt.structures",
}

__all__ = [
    "Abilities",
    "AbilityMethod",
    "BayesCalibrator",
    "ConvergenceWarning",
    "DataWarning",
    "EMCalibrator",
    "IRTError",
    "ItemFamily",
    "ItemParams",
    "ItemPriors",
    "LatentStructure",
    "ModelKind",
    "ParameterSet",
    "ParamsError",
    "ResponseDataError",
    "ResponseMatrix",
    "information",
    "log_likelihood",
    "marginal_log_likelihood",
    "probability",
    "score_abilities",
    "test_information",
]


__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)
