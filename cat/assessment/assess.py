"""``cat.assess``: one model's adaptive test on a calibrated pool, from the first item to
the typed RESULT.json, resumable when the examinee keeps a run store.

    import cat
    pool = cat.load_pool("item_pools/demo-en")
    result = cat.assess(pool, cat.SimulatedExaminee(theta=0.8, seed=1), length=100)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from pydantic import ValidationError

from cat import arguments as check
from cat.arguments import PathArg, api_errors
from cat.assessment.cost_estimate import CallsEstimate, estimate_assessment
from cat.assessment.endpoint import EndpointExaminee
from cat.assessment.examinees import Examinee
from cat.assessment.profile import Profile, bifactor_profile
from cat.assessment.result import (
    AssessmentResult,
    AssessmentSettings,
    CostEstimate,
    ItemRecord,
    PoolReference,
    ProtocolUse,
    Truth,
    Usage,
)
from cat.assessment.run import RunCalls, run_assessment
from cat.assessment.session import AssessmentSession, SessionConfig
from cat.assessment.spending import SpendingLimit, check_limit, read_prices
from cat.assessment.summary import Reference, summarize
from cat.designs.models import ReferenceModels, multidimensional_design
from cat.engine.names import AUDIT_EVERY
from cat.engine.pool_params import calibrated_params
from cat.engine.registry import (
    ALL_DESIGN_NAMES,
    AUTO,
    CRITERION_NAMES,
    DEFAULT_CONTENT_BALANCING,
    DEFAULT_ESTIMATOR,
    DEFAULT_POLICY,
    ESTIMATOR_NAMES,
    MULTIDIMENSIONAL_DESIGNS,
    POLICY_NAMES,
    REFERENCE_DESIGNS,
    CriterionName,
    DesignChoice,
    DesignName,
    EstimatorName,
    PolicyName,
)
from cat.engine.selection import PoolParams
from cat.errors import CatError
from cat.pools.loading import as_pool
from cat.pools.reference_models import load_reference_models
from cat.pools.scenarios import scenarios_of
from cat.prediction.cross_fit import choose_design
from cat.provenance import package_version, utc_now
from irt.mirt_model import Structure
from itempool import (
    REFERENCE_ANSWERS,
    LoadedPool,
    PoolFormatError,
    PredictionErrors,
    read_reference_answers,
)
from itempool.duplicates import twins
from itempool.problems import describe_errors
from synth.generation import GenerationRecord, GenerationSettings, changed_settings
from synth.pricing import Prices
from synth.protocols import ProtocolFollowed
from synth.store import RunStore

#: Called after each batch: the session, the items so far, the references.
Progress = Callable[[AssessmentSession, list[ItemRecord]], None]


@api_errors
def assess(
    pool: LoadedPool | PathArg,
    examinee: Examinee,
    *,
    length: int = 250,
    design: DesignChoice | str = DesignChoice.AUTO,
    criterion: CriterionName | str | None = None,
    policy: PolicyName | str = DEFAULT_POLICY,
    estimator: EstimatorName | str = DEFAULT_ESTIMATOR,
    se_target: float | None = None,
    min_length: int = 0,
    content_balancing: bool = DEFAULT_CONTENT_BALANCING,
    audit_every: int = AUDIT_EVERY,
    batch_size: int = 1,
    seed: int = 0,
    resume: bool = False,
    model_name: str | None = None,
    base_url: str | None = None,
    on_step: Progress | None = None,
    prices: Prices | PathArg | None = None,
    max_cost: float | None = None,
) -> AssessmentResult:
    """Give ``examinee`` an adaptive test on ``pool`` (a loaded pool, or its folder) and
    return the RESULT.json model.

    ``design`` "auto" runs the design whose cross-fitted errors on the pool's references
    were smallest at the nearest stored length (``cat calibrate --pool --cross-fit``
    stores them; a pool without them runs "irt"). Under "irt" each item is the most
    informative at the current θ̂ (``policy``), content-balanced to the pool's scenario
    shares unless ``content_balancing`` is off; after the 30th item, one item in
    ``audit_every`` (one in half as many up to the 60th; 0: none) is an audit item, easy
    or hard for the model as estimated (``cat.engine.audit``), so that answers which
    ignore difficulty are seen and the prediction falls back on the answers themselves
    (RESULT.json's ``slope_check`` and ``fallback``); under "mixture" or "low-rank" the items
    and the predicted accuracy come from that reference design (``cat.designs``), θ̂
    still from the IRT model for the rank; under "bifactor" or "mirt" from the pool's
    multidimensional model, each item the best by ``criterion``
    (``cat.engine.registry.CriterionName``; when None, the one the pool records from
    ``cat calibrate --criterion``, else the design's default). The test stops at
    ``length`` items or once SE ≤ ``se_target``, never before ``min_length``. An examinee
    with a run store (a live model) saves the session after every batch: an interrupted
    assessment raises ``CatError`` on the next call unless ``resume`` continues it, and
    ``resume`` with nothing to continue is refused too, as is ``resume`` under other
    session or generation settings than the interrupted run's. The items an examinee
    shows as few-shot examples (``example_items()``) are never asked, and are listed in
    the result's ``settings.excluded_items``. The defaults are the registry's
    (``cat.engine.registry.DEFAULT_POLICY`` and beside it), which ``cat validate``'s
    "default" policy replays. ``model_name`` (default: the
    examinee's label) and ``base_url`` are recorded in the result.

    A live model's result records what the run was expected to cost before its first
    call (``estimate``: ``cat.assessment.cost_estimate``), in money too with ``prices``
    (a ``synth.pricing.Prices`` or its JSON file), beside what it spent (``usage``);
    ``max_cost`` stops the test before a call would take the spending past it
    (stop reason "max_cost").

    Raises:
        CatError: a setting out of range or of the wrong type (the message names the
            argument), an unknown name, an uncalibrated pool, or an examinee that cannot
            answer.
    """
    pool = as_pool(pool)
    _check_examinee(examinee)
    length = check.whole(length, "length", 1)
    min_length = check.whole(min_length, "min_length", 0)
    if min_length > length:
        # Never clipped: a minimum above the maximum is a mistake the caller should see.
        raise CatError(f"the minimum length ({min_length}) is above the maximum ({length})")
    se_target = check.optional_number(se_target, "se_target", above=0)
    batch_size = check.whole(batch_size, "batch_size", 1)
    seed = check.seed(seed)
    policy = check.name(policy, "policy", POLICY_NAMES)
    estimator = check.name(estimator, "estimator", ESTIMATOR_NAMES)
    if criterion is not None:
        criterion = check.name(criterion, "criterion", CRITERION_NAMES)
    content_balancing = check.flag(content_balancing, "content_balancing")
    audit_every = check.whole(audit_every, "audit_every", 0)
    if audit_every == 1:
        raise CatError("audit_every must be 0 (no audit items) or at least 2, got 1")
    resume = check.flag(resume, "resume")
    model_name = check.optional_text(model_name, "model_name")
    base_url = check.optional_text(base_url, "base_url")
    on_step = check.callback(on_step, "on_step")
    if max_cost is not None:
        max_cost = check.optional_number(max_cost, "max_cost", above=0)
    prices = read_prices(prices)
    live = isinstance(examinee, EndpointExaminee)
    check_limit(max_cost, prices, model_name or examinee.label, live)
    params = calibrated_params(pool)
    design_errors = pool.manifest.design_errors or {}
    chosen = resolve_design(design, design_errors, length)
    if params.scored and chosen != DesignName.IRT.value:
        raise CatError(
            f"the {chosen} design is for pools of 0/1 items; pool {pool.dir} holds scored "
            "items, which the irt design assesses"
        )
    entry = pool.manifest.multidimensional
    if chosen in MULTIDIMENSIONAL_DESIGNS and pool.mirt is None:
        raise CatError(
            f"pool {pool.dir} has no multidimensional model for --design {chosen}: "
            f"calibrate it with cat calibrate --model {chosen} --pool"
        )
    if chosen in MULTIDIMENSIONAL_DESIGNS and pool.mirt is not None:
        kind = multidimensional_design(pool.mirt)
        if chosen != kind:
            raise CatError(f"pool {pool.dir} holds a {kind} model: use --design {kind} (or auto)")
    if criterion is None and chosen in MULTIDIMENSIONAL_DESIGNS and entry is not None:
        criterion = entry.criterion  # as the pool's stored errors were measured
    if criterion is not None and chosen not in MULTIDIMENSIONAL_DESIGNS:
        how = f"--design {design} chose {chosen}" if design == AUTO else f"--design {chosen}"
        raise CatError(
            f"--criterion {criterion} is for the {' and '.join(MULTIDIMENSIONAL_DESIGNS)} "
            f"designs, and {how}"
        )
    models = None
    if chosen in REFERENCE_DESIGNS:
        assert not params.scored  # a scored pool runs the irt design
        models = load_reference_models(pool, params)
    elif not params.scored and _scales_by_the_mixture(pool):
        # The IRT design's interval is scaled by how far the mixture's prediction of the
        # same answers lies from its own (cat.prediction.disagreement).
        models = load_reference_models(pool, params)
    if models is not None and pool.mirt is not None:
        models = models.with_mirt(pool.mirt, 0.0 if entry is None else entry.offset)
    config = _config(
        design=chosen,
        criterion=criterion,
        policy=policy,
        estimator=estimator,
        max_items=length,
        se_target=se_target,
        min_items=min_length,
        content_balancing=content_balancing,
        audit_every=audit_every or None,
        seed=seed,
    )
    codes = scenarios_of(pool.items, params.item_ids)
    scenario_of = {item.id: item.scenario for item in pool.items}
    references = [Reference(r.subject_id, r.theta, r.se, r.accuracy) for r in pool.references]
    name = model_name or examinee.label
    examinee.start(pool, seed)
    try:
        config = _without_examples(config, examinee, params.n_items)
        generation = _generation_record(examinee)
        protocol = protocol_use(pool, examinee)
        store = examinee.checkpoints()
        key = checkpoint_key(name, pool)
        session, log = _start(
            store,
            key,
            name,
            params,
            config,
            codes.codes,
            resume,
            models,
            generation,
            twins(pool.items),
        )
        # _start refuses --resume without an unfinished run, so resume means resumed.
        if resume and on_step is not None:  # show where it stands
            on_step(session, log)
        # A resumed run's usage counts its interrupted parts too (RunCalls).
        calls = None
        if store is not None:
            calls = RunCalls(store, examinee, store.get_meta(key) if resume else None)
        estimate, limit = None, None
        if isinstance(examinee, EndpointExaminee):
            estimate = estimate_assessment(
                pool, examinee, length=config.max_items, seed=seed, prices=prices
            )
            if max_cost is not None and prices is not None:
                per_call = prices.token_cost(
                    examinee.model,
                    round(estimate.prompt_per_call),
                    round(estimate.reply_per_call or 0),
                )
                usage_now = calls.usage if calls is not None else examinee.usage
                limit = SpendingLimit(max_cost, per_call or 0.0, prices, examinee.model, usage_now)

        def checkpoint(s: AssessmentSession, items: list[ItemRecord]) -> None:
            if store is not None and calls is not None:
                saved = _saved(s, items)
                if generation is not None:
                    saved["generation"] = generation.model_dump(mode="json")
                store.set_meta(key, {**saved, **calls.state()})

        if not resume:
            # Saved before the first answer too: a run stopped in its first batch resumes,
            # and the calls it paid count in the whole run's usage.
            checkpoint(session, log)
        log = run_assessment(
            session,
            examinee,
            batch_size,
            log,
            scenario_of,
            on_step,
            checkpoint,
            stop_before=None if limit is None else limit.reason,
        )
        truth, usage = examinee.truth(), examinee.usage()
        if usage is not None and calls is not None:
            usage = calls.usage() or usage
    finally:
        examinee.close()
    summary = summarize(
        session,
        references or None,
        list(codes.names),
        pool.manifest.prediction_errors,
        design_errors,
    )
    profile = None
    if pool.mirt is not None:
        profile = _profile(pool, session, summary.predicted_accuracy.value)
    return AssessmentResult(
        model=name,
        pool=PoolReference(
            name=pool.manifest.name,
            version=pool.manifest.version,
            n_items=params.n_items,
            path=str(pool.dir),
            scored=params.scored,
        ),
        settings=AssessmentSettings(
            **config.model_dump(),
            batch_size=batch_size,
            base_url=base_url,
            judge_model=getattr(examinee, "judge_model", None),
            generation=generation,
            protocol=protocol,
            concurrency=getattr(examinee, "concurrency", None),
            package_version=package_version(),
        ),
        seed=seed,
        **dict(summary),
        items=log,
        created=utc_now(),
        truth=None if truth is None else Truth(accuracy=truth),
        usage=None if usage is None else Usage(**usage, pool_items=params.n_items),
        estimate=_estimate_record(estimate, usage, prices, max_cost),
        profile=profile,
    )


def _estimate_record(
    estimate: CallsEstimate | None,
    usage: Mapping[str, int] | None,
    prices: Prices | None,
    max_cost: float | None,
) -> CostEstimate | None:
    """RESULT.json's ``estimate``: what was expected, and at the same prices what the
    run's usage cost."""
    if estimate is None:
        return None
    spent = None
    if prices is not None and usage is not None:
        spent = prices.token_cost(
            estimate.model, usage["prompt_tokens"], usage["completion_tokens"]
        )
    return CostEstimate(
        calls=estimate.calls,
        prompt_tokens=estimate.prompt_tokens,
        completion_tokens=estimate.completion_tokens,
        reply_source=estimate.reply_source,
        cost=None if estimate.cost is None else round(estimate.cost, 6),
        spent_cost=None if spent is None else round(spent, 6),
        max_cost=max_cost,
    )


def checkpoint_key(name: str, pool: LoadedPool) -> str:
    """Where the run store keeps the checkpoint of model ``name``'s test on ``pool``."""
    return f"assess:{name}:{pool.manifest.name}:{pool.manifest.version}"


def _without_examples(config: SessionConfig, examinee: Examinee, n_items: int) -> SessionConfig:
    """``config`` excluding the items the examinee shows as few-shot examples (an
    ``example_items()`` method names them, once started), which the test never asks.
    Refused where they leave fewer of the pool's ``n_items`` than the test's length:
    the test would stop short, or ask nothing at all."""
    shown = getattr(examinee, "example_items", None)
    excluded = tuple(shown()) if callable(shown) else ()
    if not excluded:
        return config
    left = n_items - len(set(excluded))
    if left < config.max_items:
        raise CatError(
            f"--few-shot shows {len(set(excluded)):,} of the pool's {n_items:,} items as "
            f"examples (each question's examples come from its own scenario), which leaves "
            f"{left:,} to ask, fewer than --length {config.max_items}; lower --few-shot "
            "or --length"
        )
    return _config(**{**config.model_dump(), "excluded_items": excluded})


def _generation_record(examinee: Examinee) -> GenerationRecord | None:
    """How a live examinee is asked (the settings it follows, after the pool's protocol
    and its own ``generation``), for RESULT.json and the checkpoint; None for one that
    makes no call."""
    followed = getattr(examinee, "followed", None)
    if isinstance(followed, ProtocolFollowed):
        return followed.settings.record()
    generation = getattr(examinee, "generation", None)
    return generation.record() if isinstance(generation, GenerationSettings) else None


def protocol_use(pool: LoadedPool, examinee: object) -> ProtocolUse | None:
    """Whether a live examinee follows ``pool``'s protocol; None for one that makes no
    call (it is not asked anything)."""
    followed = getattr(examinee, "followed", None)
    if not isinstance(followed, ProtocolFollowed):
        return None
    spec = pool.protocol.in_form(followed.form).spec
    return ProtocolUse(
        name=spec.name,
        source=spec.source,
        style=followed.style.value,
        followed=followed.on_protocol,
        differs=list(followed.differs),
        form=followed.form,
    )


def _check_examinee(examinee: object) -> None:
    """Refuse what cannot take the test, before the pool's work begins."""
    needed = ("label", "start", "answer", "truth", "usage", "checkpoints", "close")
    if isinstance(examinee, str) or not all(hasattr(examinee, a) for a in needed):
        raise CatError(
            "examinee must be an Examinee (cat.SimulatedExaminee, cat.ReplayExaminee, "
            f"cat.EndpointExaminee), got {type(examinee).__name__}"
        )


def _profile(pool: LoadedPool, session: AssessmentSession, predicted: float) -> Profile:
    """The multidimensional profile of the answers given (``cat.assessment.profile``)."""
    assert pool.mirt is not None
    index = {item: j for j, item in enumerate(pool.mirt.item_ids)}
    positions = np.array([index[item] for item in session.given], dtype=np.int_)
    responses = np.asarray(session.responses, dtype=np.float64)
    answers = None
    if pool.mirt.structure is Structure.BIFACTOR:  # only the general-factor rank needs them
        try:
            answers = read_reference_answers(pool.dir, pool.mirt.item_ids)
        except PoolFormatError as exc:
            raise CatError(str(exc)) from exc
    accuracy = np.array([r.accuracy for r in pool.references if r.accuracy is not None])
    return bifactor_profile(pool.mirt, positions, responses, predicted, accuracy, answers)


def _config(**settings: Any) -> SessionConfig:
    try:
        return SessionConfig.model_validate(settings)
    except ValidationError as exc:
        raise CatError(describe_errors(exc)) from exc


def _scales_by_the_mixture(pool: LoadedPool) -> bool:
    """Whether the IRT design's interval needs the mixture's prediction: the pool stores
    its references' disagreements with it, and their answers."""
    errors = pool.manifest.prediction_errors
    return (
        errors is not None
        and bool(errors.disagreement)
        and (pool.dir / REFERENCE_ANSWERS).is_file()
    )


def _saved(session: AssessmentSession, items: list[ItemRecord]) -> dict[str, Any]:
    return {
        "session": session.to_json(),
        "items": [item.model_dump(mode="json") for item in items],
        "config": session.config.model_dump(mode="json"),
        "finished": session.done,
    }


def _start(
    store: RunStore | None,
    key: str,
    name: str,
    params: PoolParams,
    config: SessionConfig,
    scenario: tuple[int, ...] | None,
    resume: bool,
    models: ReferenceModels | None = None,
    generation: GenerationRecord | None = None,
    copies: Mapping[str, tuple[str, ...]] | None = None,
) -> tuple[AssessmentSession, list[ItemRecord]]:
    """A new session, or the interrupted one in ``store`` when ``resume`` asks for it;
    a resumed one must have the same session settings and ``generation`` settings.
    ``copies`` are the pool's duplicated items (``itempool.duplicates.twins``)."""

    def new() -> AssessmentSession:
        return AssessmentSession(
            params, config, scenario, reference_models=models, twins=copies or {}
        )

    saved = store.get_meta(key) if store is not None else None
    unfinished = saved is not None and not saved.get("finished")
    if saved is not None and unfinished and not resume and not saved.get("items"):
        # Stopped before its first answer (a wrong URL or model name): nothing to lose by
        # starting over, and its paid calls are in the store all the same.
        return new(), []
    if unfinished and not resume:
        raise CatError(
            f"an unfinished assessment of {name} is in {store.path if store else ''}: add "
            "--resume to continue it (its answered items cost nothing again)"
        )
    if resume and not unfinished:
        where = f"in {store.path}" if store is not None else "(only a live model keeps one)"
        what = "finished already" if saved is not None else "was never started"
        raise CatError(
            f"nothing to resume: the assessment of {name} {what} {where}; run it without "
            "--resume (stored answers cost nothing again)"
        )
    if unfinished:
        assert saved is not None
        before = _saved_config(saved)
        if before != config:
            raise CatError(
                "--resume needs the same settings as the interrupted run: "
                + _changed_config(before, config)
            )
        if generation is not None:
            changed = changed_settings(saved.get("generation"), generation)
            if changed:
                raise CatError(
                    "--resume needs the same generation settings as the interrupted run: "
                    + "; ".join(changed)
                )
        session = AssessmentSession.from_json(
            saved["session"], params, scenario, reference_models=models, twins=copies
        )
        return session, [ItemRecord.model_validate(item) for item in saved["items"]]
    return new(), []


#: The option that sets each session setting, where it is not the setting's own name.
_OPTION_OF = {
    "max_items": "--length",
    "min_items": "--min-length",
    "excluded_items": "--few-shot (the items shown as examples)",
    "content_balancing": "--no-content-balancing",
    "randomesque_k": "the randomesque k",
    "n_strata": "the number of strata",
}


def _changed_config(before: SessionConfig | None, now: SessionConfig) -> str:
    """The settings that differ between an interrupted run's and this one's, as their
    options and values ("--length 250 -> 100")."""
    if before is None:
        return "the interrupted run's settings cannot be read; run without --resume"
    old, new = before.model_dump(mode="json"), now.model_dump(mode="json")
    parts = []
    for name in new:
        if old.get(name) == new[name]:
            continue
        option = _OPTION_OF.get(name, "--" + name.replace("_", "-"))
        if name == "excluded_items":
            was, is_ = len(old.get(name) or ()), len(new[name] or ())
            parts.append(f"{option}: {was} -> {is_} items")
        else:
            parts.append(f"{option} {old.get(name)} -> {new[name]}")
    return "; ".join(parts)


def _saved_config(saved: dict[str, Any]) -> SessionConfig | None:
    """The session settings a checkpoint holds, with the defaults of settings added
    since it was written; None when they cannot be read."""
    try:
        return SessionConfig.model_validate(saved["config"])
    except (ValidationError, KeyError, TypeError):
        return None


def resolve_design(design: str, design_errors: dict[str, PredictionErrors], length: int) -> str:
    """``design`` itself, or for "auto" the pool's design of smallest cross-fitted error
    at ``length`` (``cat.prediction.cross_fit.choose_design``)."""
    if design == AUTO:
        return choose_design(design_errors, length)
    if design not in ALL_DESIGN_NAMES:
        raise CatError(
            f"unknown design {design!r}; choose from {AUTO}, {', '.join(ALL_DESIGN_NAMES)}"
        )
    return str(design)  # a DesignChoice member as its plain value
