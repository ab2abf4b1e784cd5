"""``cat.compare``: two models answer the same adaptively chosen items until the 95%
interval of their predicted accuracy difference excludes 0, lies inside ±margin, or the
test reaches its maximum length.

    import cat
    pool = cat.load_pool("item_pools/demo-en")
    result = cat.compare(pool, cat.SimulatedExaminee(1.0), cat.SimulatedExaminee(0.0))
    result.decision, result.difference.value, result.n_items
    result.model_dump(mode="json")   # COMPARE.json
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
from pydantic import ValidationError

from cat import arguments as check
from cat.arguments import PathArg, api_errors
from cat.assessment.assess import protocol_use
from cat.assessment.examinees import Examinee, SimulatedExaminee
from cat.comparison.assemble import assemble, side
from cat.comparison.context import PoolContext
from cat.comparison.paired import PairedTest
from cat.comparison.predictors import choose_predictor
from cat.comparison.result import (
    CompareItem,
    CompareResult,
    CompareRunSettings,
)
from cat.comparison.settings import (
    DEFAULT_MARGIN,
    DEFAULT_MAX_LENGTH,
    DEFAULT_MIN_LENGTH,
    CompareSettings,
)
from cat.errors import CatError
from cat.pools.loading import as_pool
from cat.provenance import package_version
from itempool import LoadedPool
from itempool.problems import describe_errors

#: Called after each batch with the test so far.
Step = Callable[[PairedTest], None]


@api_errors
def compare(
    pool: LoadedPool | PathArg,
    examinee_a: Examinee,
    examinee_b: Examinee,
    *,
    margin: float = DEFAULT_MARGIN,
    max_length: int = DEFAULT_MAX_LENGTH,
    min_length: int = DEFAULT_MIN_LENGTH,
    batch_size: int = 1,
    selection: str = "difference",
    predictor: str = "auto",
    content_balancing: bool = True,
    looks: Sequence[int] | None = None,
    seed: int = 0,
    name_a: str | None = None,
    name_b: str | None = None,
    base_url_a: str | None = None,
    base_url_b: str | None = None,
    on_step: Step | None = None,
) -> CompareResult:
    """Compare two models on ``pool`` (a loaded 0/1 pool, or its folder): both answer
    the same items, each the item that most narrows the predicted accuracy difference
    (``cat.comparison.criterion``; ``selection`` "random" draws them uniformly),
    content-balanced to the pool's scenarios unless ``content_balancing`` is off, in
    batches of ``batch_size``. An item either model cannot answer is dropped for both.

    The test stops, never before ``min_length`` shared items and at ``looks`` (None:
    after every batch), when the 95% interval of Δ = acc(A) − acc(B) excludes 0 ("A
    better", "B better") or lies inside ±``margin`` ("equivalent"), else at
    ``max_length`` ("inconclusive"). Each model's accuracy is predicted by ``predictor``:
    "irt" (``cat assess``'s IRT plug-in), "mixture" (the reference mixture) or "auto"
    (the one of narrower cross-fitted pair errors, ``cat.comparison.predictors``). The
    interval is the wider of the posterior one and the conformal one of the pool's
    cross-fitted errors of reference pairs (``cat.comparison.interval``; a pool without
    them gets the posterior one, and the result says so). Simulated examinees without a
    seed of their own answer from independent streams drawn from ``seed``.
    ``name_a``/``name_b`` (default: the examinees' labels) and
    ``base_url_a``/``base_url_b`` are recorded.

    Raises:
        CatError: a setting out of range, a pool of scored items or a multidimensional
            one, an uncalibrated pool, or an examinee that cannot answer.
    """
    context = PoolContext.of(as_pool(pool))
    for examinee, which in ((examinee_a, "examinee_a"), (examinee_b, "examinee_b")):
        _check_examinee(examinee, which)
    if examinee_a is examinee_b and not isinstance(examinee_a, SimulatedExaminee):
        # A simulated examinee answers each side from its own stream: that pair is two
        # examinees of one ability; any other would give the same answers twice.
        raise CatError("examinee_a and examinee_b are the same examinee: compare two models")
    settings = _settings(
        margin=margin,
        max_length=check.whole(max_length, "max_length", 1),
        min_length=check.whole(min_length, "min_length", 0),
        batch_size=check.whole(batch_size, "batch_size", 1),
        selection=selection,
        predictor=predictor,
        content_balancing=check.flag(content_balancing, "content_balancing"),
        looks=None if looks is None else tuple(check.whole(k, "looks", 1) for k in looks),
        seed=check.seed(seed),
    )
    on_step = check.callback(on_step, "on_step")
    a, b = (_own_stream(x, settings.seed, side) for side, x in enumerate((examinee_a, examinee_b)))
    names = (
        check.optional_text(name_a, "name_a") or a.label,
        check.optional_text(name_b, "name_b") or b.label,
    )
    chosen = choose_predictor(context.pool, context.params, settings.max_length, settings.predictor)
    test = PairedTest(context.params, settings, context.codes, context.offset, chosen)

    items: list[CompareItem] = []
    started: list[Examinee] = []
    try:
        for examinee in (a, b):
            examinee.start(context.pool, settings.seed)
            started.append(examinee)
        test.exclude(_examples((a, b), context))
        _run(test, (a, b), context, items, on_step)
        truths, usages = (a.truth(), b.truth()), (a.usage(), b.usage())
        protocols = (protocol_use(context.pool, a), protocol_use(context.pool, b))
    finally:
        for examinee in started:
            examinee.close()
    sides = tuple(
        side(
            names[m],
            test.accuracy(m),
            len(test.given),
            settings.level,
            context,
            truths[m],
            usages[m],
            protocol=protocols[m],
        )
        for m in (0, 1)
    )
    differences = [float(x - y) for x, y in test.right]
    return assemble(
        context,
        CompareRunSettings(
            **settings.model_dump(),
            base_url_a=check.optional_text(base_url_a, "base_url_a"),
            base_url_b=check.optional_text(base_url_b, "base_url_b"),
            package_version=package_version(),
        ),
        test.predictor.name,
        "adaptive",
        test.difference,
        test.decision or "inconclusive",
        test.stop_reason,
        (sides[0], sides[1]),
        differences,
        len(test.skipped),
        items,
    )


def _run(
    test: PairedTest,
    examinees: tuple[Examinee, Examinee],
    context: PoolContext,
    items: list[CompareItem],
    on_step: Step | None,
) -> None:
    """Ask both models until the test stops, logging each item into ``items``."""
    ids = context.params.item_ids
    while not test.done:
        asked = test.next_items(test.settings.batch_size)
        if not asked:
            break
        names = [ids[j] for j in asked]
        answers = [examinee.answer(names) for examinee in examinees]
        for j, x, y in zip(asked, *answers, strict=True):
            test.record(j, _binary(x), _binary(y))
        d = test.difference
        for name, x, y in zip(names, *answers, strict=True):
            items.append(
                CompareItem(
                    id=name,
                    scenario=context.scenario_of.get(name),
                    response_a=_binary(x),
                    response_b=_binary(y),
                    difference_after=d.value,
                    half_width_after=d.half_width,
                )
            )
        if on_step is not None:
            on_step(test)


def _binary(value: float | None) -> int | None:
    """A 0/1 answer as an int (``PairedTest.record`` refuses anything else)."""
    if value is None:
        return None
    if value not in (0, 1):
        raise CatError(f"a response is 1, 0 or None (cannot answer), not {value!r}")
    return int(value)


def _examples(examinees: tuple[Examinee, Examinee], context: PoolContext) -> list[int]:
    """Pool positions of the items either model is shown as a few-shot example (an
    examinee names them by ``example_items()``, once started), never asked."""
    index = {item: j for j, item in enumerate(context.params.item_ids)}
    out: list[int] = []
    for examinee in examinees:
        shown = getattr(examinee, "example_items", None)
        out.extend(index[i] for i in (shown() if callable(shown) else ()) if i in index)
    return out


def _check_examinee(examinee: object, argument: str) -> None:
    needed = ("label", "start", "answer", "truth", "usage", "checkpoints", "close")
    if isinstance(examinee, str) or not all(hasattr(examinee, n) for n in needed):
        raise CatError(
            f"{argument} must be an Examinee (cat.SimulatedExaminee, cat.ReplayExaminee, "
            f"cat.EndpointExaminee), got {type(examinee).__name__}"
        )


def _own_stream(examinee: Examinee, seed: int, side: int) -> Examinee:
    """A simulated examinee without a seed of its own draws from the comparison's seed;
    two of them would draw the same numbers, and answer alike far more than independent
    models do: each gets a stream of its own."""
    if isinstance(examinee, SimulatedExaminee) and examinee.seed is None:
        child = np.random.SeedSequence(seed).spawn(2)[side]  # numpy's independent streams
        state = child.generate_state(1)[0]
        return dataclasses.replace(examinee, seed=int(state))
    return examinee


def _settings(**values: object) -> CompareSettings:
    try:
        return CompareSettings.model_validate(values)
    except ValidationError as exc:
        raise CatError(describe_errors(exc)) from exc
