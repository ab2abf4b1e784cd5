"""The names of selection policies, ability estimators, designs and criteria, and what
``cat assess`` runs by default.

Kept apart from ``cat.engine.registry``, which makes the strategies these names stand
for, so that the ``cat`` command line can offer them as choices (``--help``, argument
checks) without importing numpy.
"""

from __future__ import annotations

from enum import StrEnum

from cat.errors import CatError


class PolicyName(StrEnum):
    """Item selection: maximum Fisher information, Kullback–Leibler information, random,
    randomesque (random among the k most informative), a-stratified with b-blocking,
    proportional (drawn with probability proportional to information)."""

    MFI = "mfi"
    KL = "kl"
    RANDOM = "random"
    RANDOMESQUE = "randomesque"
    ASTRAT = "astrat"
    PROPORTIONAL = "proportional"


class EstimatorName(StrEnum):
    """Ability estimators: maximum likelihood (MAP while all answers agree), maximum a
    posteriori, expected a posteriori, Warm's weighted likelihood."""

    MLE = "mle"
    MAP = "map"
    EAP = "eap"
    WLE = "wle"


POLICY_NAMES: tuple[str, ...] = tuple(p.value for p in PolicyName)
ESTIMATOR_NAMES: tuple[str, ...] = tuple(e.value for e in EstimatorName)
#: Appended to a policy name ("mfi+cb"): content-balanced to the pool's scenario shares.
BALANCED_SUFFIX = "+cb"


class DesignName(StrEnum):
    """Whole designs (selection and predictor): the IRT design (MFI with ML θ, scored by
    the IRT plug-in), the reference mixture and the low-rank model of the references
    (``cat.designs``). ``cat assess`` runs, per pool, the one of smallest cross-fitted
    error on the pool's own references (``cat.prediction.cross_fit.choose_design``)."""

    IRT = "irt"
    MIXTURE = "mixture"
    LOW_RANK = "low-rank"
    BIFACTOR = "bifactor"
    MIRT = "mirt"


#: The designs every calibrated pool can run (a multidimensional one adds ``BIFACTOR``).
DESIGN_NAMES: tuple[str, ...] = (
    DesignName.IRT.value,
    DesignName.MIXTURE.value,
    DesignName.LOW_RANK.value,
)
#: The designs of multidimensional pools, each run on its pool's model with the low-rank
#: design's machinery (``cat.designs``): ``bifactor`` (cat calibrate --model bifactor)
#: and ``mirt`` (--model mirt: a correlated factor per scenario,
#: ``cat.designs.multidimensional``).
MULTIDIMENSIONAL_DESIGNS: tuple[str, ...] = (DesignName.BIFACTOR.value, DesignName.MIRT.value)
ALL_DESIGN_NAMES: tuple[str, ...] = (*DESIGN_NAMES, *MULTIDIMENSIONAL_DESIGNS)


def design_names(multidimensional: str | None = None) -> tuple[str, ...]:
    """The designs replayed and chosen among: ``DESIGN_NAMES``, and the design of a
    multidimensional model ("bifactor" or "mirt") when the pool (or ``cat validate
    --model``) has one."""
    if multidimensional is None:
        return DESIGN_NAMES
    if multidimensional not in MULTIDIMENSIONAL_DESIGNS:
        raise CatError(
            f"no design for a {multidimensional!r} model; "
            f"choose from {', '.join(MULTIDIMENSIONAL_DESIGNS)}"
        )
    return (*DESIGN_NAMES, multidimensional)


class CriterionName(StrEnum):
    """How a multidimensional design (``bifactor``, ``mirt``) picks its next item, each
    under the Laplace posterior N(θ̂, Σ) of the factors (``cat.designs.multidimensional``):

    - ``total``: the largest drop in the variance of the predicted full-pool accuracy
      (c-optimal for the total score);
    - ``profile``: the largest drop in the summed variances of the scenarios' predicted
      accuracies (A-optimal for the profile);
    - ``general``: the largest drop in the general factor's variance (bifactor only);
    - ``d-optimal``: the largest rise in det(Σ⁻¹), Bayesian D-optimality (Segall 1996),
      the default;
    - ``a-optimal``: the largest drop in trace(Σ), A-optimality over the factors;
    - ``kl``: the largest posterior-weighted Kullback–Leibler information between the
      answer at θ̂ and at the other θ the posterior allows (Chang & Ying 1996;
      multidimensional: Veldkamp & van der Linden 2002, Mulder & van der Linden 2009).
    """

    TOTAL = "total"
    PROFILE = "profile"
    GENERAL = "general"
    D_OPTIMAL = "d-optimal"
    A_OPTIMAL = "a-optimal"
    KL = "kl"


CRITERION_NAMES: tuple[str, ...] = tuple(c.value for c in CriterionName)
#: The multidimensional designs' criterion when none is asked for. In held-out replays on
#: MMLU-Pro (benchmarks/bench_criteria.py) it was the best or tied with the best of both
#: designs at 30 items, and at 100–250 items far better than the prediction-targeted
#: ``total`` and ``profile`` for the bifactor design (whose specific factors those leave
#: unmeasured), tied for the mirt design: a design that learns every factor is what a
#: misspecified model needs, and D-optimality is the multidimensional CAT literature's
#: standard (Segall 1996).
DEFAULT_CRITERION = CriterionName.D_OPTIMAL


#: ``cat assess --design auto``: the pool's design of smallest cross-fitted error.
AUTO = "auto"


class DesignChoice(StrEnum):
    """What ``cat assess --design`` takes: "auto" or one of ``DesignName``."""

    AUTO = "auto"
    IRT = "irt"
    MIXTURE = "mixture"
    LOW_RANK = "low-rank"
    BIFACTOR = "bifactor"
    MIRT = "mirt"


#: The designs that choose items by their own model of the references (their answers,
#: their low-rank fit, the bifactor model) instead of the unidimensional parameters.
REFERENCE_DESIGNS: tuple[str, ...] = (
    DesignName.MIXTURE.value,
    DesignName.LOW_RANK.value,
    DesignName.BIFACTOR.value,
    DesignName.MIRT.value,
)

# What `cat assess` runs with no options, in one place: `cat assess`, `cat.assess`,
# `cat calibrate --cross-fit` and the "default" policy of `cat validate` all read it here.
#: The policy name in `cat validate` of what `cat assess` runs with no options on a pool
#: with cross-fitted errors: per held-out block, the design (of ``DESIGN_NAMES``) whose
#: errors in a cross-fit inside the training subjects are smallest.
DEFAULT = "default"
#: The IRT design's selection (content-balanced to the pool's shares when items have
#: scenarios).
DEFAULT_POLICY = PolicyName.MFI
#: The IRT design's ability estimator (ML, MAP while all answers agree).
DEFAULT_ESTIMATOR = EstimatorName.MLE
#: Whether the IRT design keeps the pool's mix of scenarios.
DEFAULT_CONTENT_BALANCING = True
#: Every how many items one is an audit item (``cat.engine.audit``).
AUDIT_EVERY = 10


def default_selection(scenario: tuple[int, ...] | None) -> str:
    """The name of the IRT design's selection policy (what ``cat assess`` runs): MFI,
    content-balanced to the pool's shares ("mfi+cb") when each item's ``scenario`` is
    known."""
    if DEFAULT_CONTENT_BALANCING and scenario:
        return f"{DEFAULT_POLICY.value}{BALANCED_SUFFIX}"
    return DEFAULT_POLICY.value
