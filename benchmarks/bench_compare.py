"""``cat compare`` replayed on pairs of real models: how often it decides wrongly, how often
it decides at all, and how many items it uses, beside random items scored the same way
and a fixed-length paired random test on the raw answers.

    python benchmarks/bench_compare.py                 # simulated pairs, both sets (~15 min
                                                       # with the pools cached, +25 to build)
    python benchmarks/bench_compare.py --quick         # one fold, 28 pairs, 40 simulated
    python benchmarks/bench_compare.py --data oll-arc --pairs 30 --sims 0
    python benchmarks/bench_compare.py --data oll-arc --references 30 --max-folds 2 \
        --per-stratum 15 --sims 0      # issue 41: 30 references, pairs by |Δ| stratum

Protocol (nothing about a compared model is in its pool): the models are split into
``--folds`` folds; per fold a pool is calibrated on the other folds' models as ``cat
calibrate --pool`` calibrates one (3PL, the project's defaults, cross-fitted errors from
those training models only, at ``--cross-fit-lengths``; cached in
/tmp/cat-bench-compare), and pairs of the fold's held-out models are compared on it
(every pair, or ``--pairs`` per fold drawn with a fixed seed). Each model answers from
its recorded answers; an item either model never answered is skipped. Truth: the two
models' accuracy on every item both answered.

Arms, on the same pairs:

- (a) ``cat compare`` as built (``cat.compare``'s defaults: difference-targeted items,
  content-balanced where the pool has scenarios, the predictor of narrower pair errors,
  the interval of ``cat.comparison.interval``, looks at 30, 60, 120, 250);
- (a) with the IRT plug-in forced, and (a)'s items under the other stopping rules it was
  chosen among (Bonferroni on both parts of the interval, the looks at 95% each, a look
  after every item at 95%) and as it was before issue 41 (one width for every pair, no
  check against the shared answers) or with one of those two guards only, replayed off
  the items (a) asked: a rule only stops them earlier (checked: the default replayed so
  agrees with (a) on every pair);
- (b) random items (content-balanced the same way), the same predictor, interval and
  stopping rule;
- (c) a fixed-length paired random test on the raw answers: both models the same n
  random items both answered, the 95% t interval of the mean paired difference (with the
  finite-population correction), decided by the same rule (excludes 0; inside ±margin),
  at several n, ``--repeats`` draws per pair.

``--references K`` calibrates each fold's pool on K of the other folds' models (seeded),
``--per-stratum N`` takes up to N pairs per fold from each stratum of the true
difference |Δ| (under 1 point, 1–3, 3–5, 5–10, 10 and more), for the table by stratum.

Printed per arm: wrong decisions (says A > B when B ≥ A on the full benchmark, or the
reverse) as a share of all pairs and of decided pairs, decided share, equivalence calls
(and those whose true difference is beyond the margin), median and quartiles of the
items used; the n at which (c) first reaches (a)'s decided share, with its error rate;
and the coverage of the 95% interval at 30, 100 and 250 items (no stopping); then by
stratum of |Δ|: each arm's decided pairs, wrong decisions and how many of the decided
pairs' intervals held Δ, the paired random test at each arm's mean number of items,
and the coverage without stopping, now and before issue 41. First,
``--sims`` pairs of simulated models of equal ability on the demo pool, where the
interval is the posterior one alone: any decision there is wrong. Issue 28's targets:
wrong decisions ≤ 5%; median items of (a) below the n of (c) at the same error rate.

Measured (the default run, 2 cores): MMLU-Pro 112 pairs, (a) 0 wrong, 82% decided,
median 60 items (quartiles 30–152), (c) reaches 84% decided at n = 300 (0.2% wrong);
ARC 300 pairs, (a) 0 wrong, 72% decided, median 60 (30–250), the IRT plug-in alone 50%
and median 250, (c) 71% at n = 250 and 75% at 300; 200 equal simulated pairs: 2.5%
wrong, against 10% for four looks at 95% each and 19% for a look after every item.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.stats import t as student_t

from cat.comparison.paired import (
    A_BETTER,
    B_BETTER,
    EQUIVALENT,
    PairedTest,
)
from cat.comparison.plugin import Difference, Terms, decide, difference
from cat.comparison.predictors import Predictor, choose_predictor
from cat.comparison.settings import CompareSettings
from cat.engine.selection import PoolInfo
from cat.pools.scenarios import scenarios_of
from cat.prediction.predictors import reference_offset
from irt.models import ItemParams
from irt.responses import ResponseMatrix
from itempool import LoadedPool, PredictionErrors, load_pool
from itempool.formats.responses import read_responses, write_jsonl

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SEED = 0
CACHE = Path("/tmp/cat-bench-compare")
FIXED_N = (25, 50, 100, 150, 200, 250, 300, 400, 500, 600, 735, 1000, 1500, 2000)


@dataclass
class Outcome:
    """One arm's result on one pair."""

    decision: str
    n_items: int
    truth: float  # true accuracy difference A − B on the items both answered
    estimate: float
    # The interval at the decision (or at the end, undecided).
    low: float = float("nan")
    high: float = float("nan")

    @property
    def held(self) -> bool:
        return bool(self.low <= self.truth <= self.high)


def _pool(folder: str, data: ResponseMatrix, train: np.ndarray, lengths: list[int]) -> Path:
    """The pool calibrated on ``train`` rows, cached by its inputs."""
    import cat
    from cat.pools.importer import import_questions

    ids = ",".join(data.subject_ids[i] for i in train)
    key = hashlib.sha256(f"{folder}|{ids}|{lengths}|{SEED}".encode()).hexdigest()[:16]
    pool = CACHE / f"{folder}-{key}"
    if (pool / "params.csv").is_file() and "prediction_errors" in (pool / "pool.json").read_text():
        return pool
    if pool.exists():
        import shutil

        shutil.rmtree(pool)
    pool.parent.mkdir(parents=True, exist_ok=True)
    items = SHARED / folder / "items.csv.gz"
    if items.exists():
        mapping = {
            "id": "question_id",
            "question": "question",
            "answer": "answer",
            "options": "options",
            "scenario": "category",
        }
        import_questions(items, mapping, pool, folder, "en")
    else:
        pool.mkdir()
        (pool / "pool.json").write_text(json.dumps({"name": folder, "language": "en"}))
        rows = (
            {"id": i, "question": f"item {i}", "options": {"A": "1", "B": "2"}, "answer": "A"}
            for i in data.item_ids
        )
        (pool / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    responses = pool / "train.jsonl"
    write_jsonl(data.subset(subjects=train), responses)
    cat.calibrate(
        responses, model="3pl", pool=pool, cross_fit=5, cross_fit_lengths=lengths, seed=SEED
    )
    responses.unlink()
    return pool


@dataclass
class Fold:
    """A pool calibrated without the held-out models, ready for replays."""

    pool: LoadedPool
    params: ItemParams
    info: PoolInfo
    scenario: tuple[int, ...] | None
    offset: float
    columns: np.ndarray  # the response matrix's column of each pool item
    predictors: dict[str, Predictor] = field(default_factory=dict)

    def predictor(self, settings: CompareSettings) -> Predictor:
        """The predictor ``settings`` asks for, as ``cat.compare`` chooses it."""
        if settings.predictor not in self.predictors:
            self.predictors[settings.predictor] = choose_predictor(
                self.pool, self.params, settings.max_length, settings.predictor
            )
        return self.predictors[settings.predictor]


def _fold(pool_dir: Path, data: ResponseMatrix) -> Fold:
    pool = load_pool(pool_dir)
    params = pool.params
    assert isinstance(params, ItemParams)
    codes = scenarios_of(pool.items, params.item_ids).codes
    refs = [r for r in pool.references if r.accuracy is not None]
    offset = reference_offset(
        params, np.array([r.theta for r in refs]), np.array([r.accuracy for r in refs], float)
    )
    column = {item: j for j, item in enumerate(data.item_ids)}
    columns = np.array([column[i] for i in params.item_ids])
    return Fold(pool, params, PoolInfo.build(params), codes or None, offset, columns)


def _replay(
    fold: Fold,
    answers: tuple[np.ndarray, np.ndarray],
    settings: CompareSettings,
    truth: float,
) -> Outcome:
    """One pair through the paired test; ``answers`` per model: 1/0, −1 not answered
    (in pool order)."""
    test = PairedTest(
        fold.params, settings, fold.scenario, fold.offset, fold.predictor(settings), fold.info
    )
    decided: Outcome | None = None
    while not test.done:
        for j in test.next_items(settings.batch_size):
            a, b = int(answers[0][j]), int(answers[1][j])
            test.record(j, None if a < 0 else a, None if b < 0 else b)
        d = test.difference
        if test.decision is not None and decided is None:
            decided = Outcome(test.decision, d.n, truth, d.value, d.low, d.high)
    assert decided is not None
    return decided


@dataclass
class Trajectory:
    """A pair's test run to the maximum length without stopping: per shared-item count,
    the two models' terms, SEs and disagreements (what every stopping rule reads)."""

    steps: dict[int, tuple[tuple[Terms, Terms], tuple[float, float], tuple[float, float] | None]]
    errors: PredictionErrors | None
    #: A right − B right on each shared item, in the order asked.
    shared: np.ndarray = field(default_factory=lambda: np.zeros(0))


def _trajectory(
    fold: Fold, answers: tuple[np.ndarray, np.ndarray], settings: CompareSettings
) -> Trajectory:
    never = settings.model_copy(update={"looks": (settings.max_length,), "min_length": 10**6})
    test = PairedTest(
        fold.params, never, fold.scenario, fold.offset, fold.predictor(settings), fold.info
    )
    steps = {}
    while not test.done:
        for j in test.next_items(1):
            a, b = int(answers[0][j]), int(answers[1][j])
            test.record(j, None if a < 0 else a, None if b < 0 else b)
        ses = (float(test.se[0]), float(test.se[1]))
        steps[len(test.given)] = (test.terms, ses, test.disagreements)
    shared = np.array([a - b for a, b in test.right], dtype=np.float64)
    return Trajectory(steps, test.errors, shared)


def _at(
    t: Trajectory,
    n: int,
    level: float,
    stored_level: float,
    paired: bool = True,
    scaled: str | None = "unlike",
) -> Difference:
    """The difference after ``n`` shared items, as ``cat compare`` makes it (``paired``:
    joined with the shared answers' own interval; ``scaled``: the stored width widened
    by the disagreements for a pair with a model unlike the references, or "every"
    pair), or without either (False, None), as it was made before issue 41."""
    terms, ses, disagreements = t.steps[n]
    return difference(
        terms,
        ses,
        (n, n),
        t.errors,
        level,
        stored_level=stored_level,
        disagreements=disagreements if scaled else None,
        shared=t.shared[:n] if paired else None,
        scale_for=scaled or "unlike",
    )


#: A stopping rule replayed off a trajectory: its looks, each look's levels of the
#: posterior and the stored part, whether it joins the paired answers' interval, and
#: which pairs' stored width it scales (``_at``).
Rule = tuple[tuple[int, ...], float, float, bool, str | None]


def _offline(t: Trajectory, rule: Rule, margin: float, truth: float, min_length: int) -> Outcome:
    """The decision a stopping rule reaches on the trajectory (the items do not depend on
    the rule: it only stops them earlier)."""
    looks, level, stored_level, paired, scaled = rule
    last = max(t.steps)
    for n in sorted(t.steps):
        if n < min_length or (n not in looks and n != last):
            continue
        d = _at(t, n, level, stored_level, paired, scaled)
        decision = decide(d, margin)
        if decision is not None:
            return Outcome(decision, n, truth, d.value, d.low, d.high)
    d = _at(t, last, level, stored_level, paired, scaled)
    return Outcome("inconclusive", last, truth, d.value, d.low, d.high)


def _rules(base: CompareSettings, min_length: int) -> dict[str, Rule]:
    """The default and the remedies for sequential looks it was chosen among."""
    looks = base.look_lengths()
    every = tuple(range(max(min_length, 1), base.max_length + 1))
    shown = ",".join(map(str, looks))
    return {
        BEFORE: (looks, base.look_level, base.stored_level, False, None),
        "(a) width scaled for every pair": (
            looks,
            base.look_level,
            base.stored_level,
            True,
            "every",
        ),
        "(a) paired check, one width": (looks, base.look_level, base.stored_level, True, None),
        "(a) Bonferroni on both parts": (looks, base.look_level, base.look_level, True, "unlike"),
        f"(a) looks {shown} at 95% each": (looks, 0.95, 0.95, True, "unlike"),
        "(a) a look after every item at 95%": (every, 0.95, 0.95, True, "unlike"),
    }


#: The default before issue 41: one width for every pair, no check against the answers.
BEFORE = "(a) as before issue 41"


def _fixed(
    right: tuple[np.ndarray, np.ndarray],
    both: np.ndarray,
    truth: float,
    margin: float,
    rng: np.random.Generator,
    repeats: int,
) -> dict[int, list[Outcome]]:
    """Arm (c): the paired random test at each fixed n."""
    shared = np.flatnonzero(both)
    d_all = right[0][shared] - right[1][shared]
    out: dict[int, list[Outcome]] = {}
    for n in FIXED_N:
        if n > shared.size:
            continue
        for _ in range(repeats):
            d = d_all[rng.choice(shared.size, n, replace=False)]
            # The discordant share with one added of each kind: n identical answers
            # would otherwise give a zero-width interval and a false "equivalent".
            mean = float(d.mean())
            discordant = (np.count_nonzero(d) + 1) / (n + 2)
            sd = float(np.sqrt(max(discordant - mean**2, 0.0) * n / (n - 1)))
            fpc = np.sqrt((shared.size - n) / max(shared.size - 1, 1))
            half = float(student_t.ppf(0.975, n - 1)) * sd / np.sqrt(n) * fpc
            low, high = mean - half, mean + half
            decision = (
                A_BETTER
                if low > 0
                else B_BETTER
                if high < 0
                else EQUIVALENT
                if -margin <= low and high <= margin
                else "inconclusive"
            )
            out.setdefault(n, []).append(Outcome(decision, n, truth, mean))
    return out


def _wrong(o: Outcome) -> bool:
    return (o.decision == A_BETTER and o.truth <= 0) or (o.decision == B_BETTER and o.truth >= 0)


@dataclass
class Summary:
    wrong_all: float
    wrong_decided: float
    decided: float
    equivalent: int
    equivalent_wrong: int
    quartiles: tuple[float, float, float]
    n: int


def _summary(outcomes: list[Outcome], margin: float) -> Summary:
    decided = [o for o in outcomes if o.decision in (A_BETTER, B_BETTER)]
    wrong = sum(_wrong(o) for o in outcomes)
    eq = [o for o in outcomes if o.decision == EQUIVALENT]
    q = np.percentile([o.n_items for o in outcomes], [25, 50, 75])
    return Summary(
        wrong / len(outcomes),
        wrong / max(len(decided), 1),
        len(decided) / len(outcomes),
        len(eq),
        sum(abs(o.truth) > margin for o in eq),
        (float(q[0]), float(q[1]), float(q[2])),
        len(outcomes),
    )


def _line(name: str, s: Summary) -> str:
    return (
        f"{name:<34}{s.wrong_all:>8.3f}{s.wrong_decided:>9.3f}{s.decided:>9.3f}"
        f"{s.equivalent:>6d}/{s.equivalent_wrong:<3d}"
        f"{s.quartiles[1]:>8.0f}  ({s.quartiles[0]:.0f}–{s.quartiles[2]:.0f})"
    )


def run(folder: str, args: argparse.Namespace) -> None:
    data = read_responses(SHARED / folder / "responses.csv.gz")
    rng = np.random.default_rng(SEED)
    order = rng.permutation(data.n_subjects)
    parts = np.array_split(order, args.folds)
    lengths = [int(x) for x in args.cross_fit_lengths.split(",")]
    right = (data.values == 1).astype(np.int8)
    base = CompareSettings(
        margin=args.margin, max_length=args.max_length, min_length=args.min_length
    )
    looks = base.look_lengths()
    arms = {
        "(a) cat compare": base,
        "(b) random items, same rule": base.model_copy(update={"selection": "random"}),
        "(a) with the IRT plug-in only": base.model_copy(update={"predictor": "irt"}),
    }
    # The remedies for sequential looks, measured on the same items as (a).
    variants = _rules(base, args.min_length)
    results: dict[str, list[Outcome]] = {name: [] for name in (*arms, *variants)}
    fixed: dict[int, list[Outcome]] = {}
    coverage: dict[str, dict[int, list[bool]]] = {"difference": {}, "random": {}}
    # Per test length, (truth, held) of the default's interval and of its hull with the
    # paired answers' interval, for the table by stratum.
    at_n: dict[int, list[tuple[float, bool]]] = {}
    before: dict[int, list[tuple[float, bool]]] = {}
    mismatches = 0
    t0 = time.perf_counter()
    n_pairs = 0
    for f, held in enumerate(parts[: args.max_folds or len(parts)]):
        train = np.sort(np.setdiff1d(order, held))
        if args.references and args.references < len(train):
            pick = np.random.default_rng([SEED, f, 7]).choice(len(train), args.references, False)
            train = np.sort(train[pick])
        fold = _fold(_pool(folder, data, train, lengths), data)
        pairs = [(i, k) for n, i in enumerate(held) for k in held[n + 1 :]]
        if args.per_stratum:
            pairs = _stratified(pairs, data, right, args.per_stratum, f)
        elif args.pairs and len(pairs) > args.pairs:
            pick = np.random.default_rng([SEED, f]).choice(len(pairs), args.pairs, replace=False)
            pairs = [pairs[p] for p in sorted(pick)]
        print(
            f"fold {f + 1}/{args.folds}: {len(train)} training models, {len(held)} held out, "
            f"{len(pairs)} pairs ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
        for i, k in pairs:
            both = data.observed[i] & data.observed[k]
            truth = float(right[i][both].mean() - right[k][both].mean())
            answers = tuple(
                np.where(data.observed[r][fold.columns], right[r][fold.columns], -1) for r in (i, k)
            )
            pair_answers = (answers[0], answers[1])
            for name, settings in arms.items():
                results[name].append(_replay(fold, pair_answers, settings, truth))
            for selection in coverage:
                path = _trajectory(
                    fold, pair_answers, base.model_copy(update={"selection": selection})
                )
                for n in (30, 100, 250):
                    if n in path.steps:
                        d = _at(path, n, 0.95, 0.95)
                        coverage[selection].setdefault(n, []).append(d.low <= truth <= d.high)
                        if selection == "difference":
                            old = _at(path, n, 0.95, 0.95, False, None)
                            before.setdefault(n, []).append((truth, old.low <= truth <= old.high))
                            at_n.setdefault(n, []).append((truth, d.low <= truth <= d.high))
                if selection != "difference":
                    continue
                default_rule = (looks, base.look_level, base.stored_level, True, "unlike")
                default = _offline(path, default_rule, args.margin, truth, args.min_length)
                live = results["(a) cat compare"][-1]
                mismatches += (default.decision, default.n_items) != (live.decision, live.n_items)
                for name, rule in variants.items():
                    results[name].append(_offline(path, rule, args.margin, truth, args.min_length))
            got = _fixed(
                (right[i], right[k]),
                both,
                truth,
                args.margin,
                np.random.default_rng([SEED, int(i), int(k)]),
                args.repeats,
            )
            for n, outs in got.items():
                fixed.setdefault(n, []).extend(outs)
            n_pairs += 1
    seconds = time.perf_counter() - t0
    truths = np.array([o.truth for o in results["(a) cat compare"]])
    close = np.mean(np.abs(truths) <= args.margin)
    print(
        f"\n{folder}: {n_pairs} pairs, {args.folds} folds ({seconds:.0f} s); |true Δ| median "
        f"{np.median(np.abs(truths)):.3f}, share within the margin {close:.2f}"
    )
    print(
        f"{'arm':<34}{'wrong':>8}{'/decided':>9}{'decided':>9}{'equiv/wrong':>10}"
        f"{'items: median (quartiles)':>28}"
    )
    summaries = {name: _summary(outs, args.margin) for name, outs in results.items()}
    for name, s in summaries.items():
        print(_line(name, s))
    fixed_summary = {n: _summary(outs, args.margin) for n, outs in sorted(fixed.items())}
    for n, s in fixed_summary.items():
        print(_line(f"(c) paired random, n = {n}", s))
    target = summaries["(a) cat compare"]
    reach = [n for n, s in fixed_summary.items() if s.decided >= target.decided]
    if reach:
        s = fixed_summary[reach[0]]
        print(
            f"\n(c) first reaches (a)'s decided share {target.decided:.3f} at n = {reach[0]} "
            f"(decided {s.decided:.3f}, wrong {s.wrong_all:.3f}); (a) used a median of "
            f"{target.quartiles[1]:.0f} items"
        )
    else:
        print(f"\n(c) never reaches (a)'s decided share {target.decided:.3f} at the n tried")
    print(
        f"(the default rule replayed off the trajectories disagreed with (a) on {mismatches} pairs)"
    )
    for sel, table in coverage.items():
        if table:
            text = ", ".join(f"{n}: {np.mean(h):.3f}" for n, h in sorted(table.items()))
            print(f"coverage of the 95% interval, {sel} items, no stopping: {text}")
    _by_stratum(results, at_n, before, fixed)


#: Strata of the true difference |Δ| (accuracy points / 100) the tables are split by.
STRATA = ((0.0, 0.01), (0.01, 0.03), (0.03, 0.05), (0.05, 0.10), (0.10, 1.01))


def _stratum(delta: float) -> int:
    return next(k for k, (lo, hi) in enumerate(STRATA) if lo <= abs(delta) < hi)


def _stratified(
    pairs: list[tuple[int, int]], data: ResponseMatrix, right: np.ndarray, per: int, fold: int
) -> list[tuple[int, int]]:
    """Up to ``per`` pairs from each stratum of their true difference (seeded)."""
    strata: dict[int, list[tuple[int, int]]] = {}
    for i, k in pairs:
        both = data.observed[i] & data.observed[k]
        truth = float(right[i][both].mean() - right[k][both].mean())
        strata.setdefault(_stratum(truth), []).append((i, k))
    rng = np.random.default_rng([SEED, fold, 11])
    out: list[tuple[int, int]] = []
    for k in sorted(strata):
        group = strata[k]
        pick = rng.choice(len(group), min(per, len(group)), replace=False)
        out.extend(group[p] for p in sorted(pick))
    return out


def _by_stratum(
    results: dict[str, list[Outcome]],
    at_n: dict[int, list[tuple[float, bool]]],
    before: dict[int, list[tuple[float, bool]]],
    fixed: dict[int, list[Outcome]],
) -> None:
    """Per stratum of |Δ|: each arm's decided share, wrong decisions and how often the
    interval it decided with held Δ; the no-stopping coverage at each length; and the
    paired random test at the arm's median length."""
    names = [
        "(a) cat compare",
        BEFORE,
        "(a) width scaled for every pair",
        "(a) paired check, one width",
        "(b) random items, same rule",
    ]
    labels = [f"{lo * 100:g}–{hi * 100:g}" if hi < 1 else f"≥{lo * 100:g}" for lo, hi in STRATA]
    print("\nby true |Δ| (points): pairs, decided, wrong, decided pairs whose 95% interval held Δ")
    print(f"{'arm':<40}" + "".join(f"{x:>22}" for x in labels))
    for name in names:
        cells = []
        for k in range(len(STRATA)):
            outs = [o for o in results.get(name, []) if _stratum(o.truth) == k]
            dec = [o for o in outs if o.decision in (A_BETTER, B_BETTER)]
            wrong = sum(_wrong(o) for o in outs)
            held = sum(o.held for o in dec)
            cells.append(f"{len(outs)}: {len(dec)} d, {wrong} w, {held}/{len(dec)} h")
        print(f"{name:<40}" + "".join(f"{c:>22}" for c in cells))
    n_fixed = sorted(fixed)
    for name in names[:4]:
        outs = results.get(name, [])
        if not outs or not n_fixed:
            continue
        mean = float(np.mean([o.n_items for o in outs]))
        n = min(n_fixed, key=lambda m: abs(m - mean))
        mine, theirs = _summary(outs, 0.01), _summary(fixed[n], 0.01)
        print(
            f"{name}: decided {mine.decided:.3f} (wrong {mine.wrong_all:.3f}) with a mean of "
            f"{mean:.0f} items; the paired random test at n = {n}: decided "
            f"{theirs.decided:.3f} (wrong {theirs.wrong_all:.3f})"
        )
    for label, table in (("the default's", at_n), ("the former default's", before)):
        for n, rows in sorted(table.items()):
            cells = []
            for k in range(len(STRATA)):
                kept = [h for truth, h in rows if _stratum(truth) == k]
                cells.append(f"{np.mean(kept):.3f} of {len(kept)}" if kept else "—")
            print(f"coverage of {label} interval at {n}, no stopping: " + ", ".join(cells))


def simulated(n_pairs: int, args: argparse.Namespace) -> None:
    """Pairs of simulated models of equal ability on the demo pool, which stores no
    cross-fitted errors: the interval is the posterior one alone, and the answers follow
    the IRT model. Any decision for A or B is wrong."""
    from irt.models import probability

    pool_dir = Path(__file__).resolve().parents[1] / "item_pools" / "demo-en"
    pool = load_pool(pool_dir)
    params = pool.params
    assert isinstance(params, ItemParams)
    codes = scenarios_of(pool.items, params.item_ids).codes
    fold = Fold(pool, params, PoolInfo.build(params), codes, 0.0, np.arange(params.n_items))
    base = CompareSettings(
        margin=args.margin, max_length=args.max_length, min_length=args.min_length
    )
    rules: dict[str, Rule] = {
        "(a) cat compare": (
            base.look_lengths(),
            base.look_level,
            base.stored_level,
            True,
            "unlike",
        )
    }
    rules.update(_rules(base, args.min_length))
    results: dict[str, list[Outcome]] = {name: [] for name in rules}
    t0 = time.perf_counter()
    for k in range(n_pairs):
        rng = np.random.default_rng([SEED, 99, k])
        theta = float(rng.normal())
        p = probability([theta], params)[0]
        answers = tuple((rng.random(params.n_items) < p).astype(np.int8) for _ in range(2))
        path = _trajectory(fold, (answers[0], answers[1]), base)
        for name, rule in rules.items():
            results[name].append(_offline(path, rule, args.margin, 0.0, args.min_length))
    print(
        f"\nsimulated: {n_pairs} pairs of equal ability (θ ~ N(0, 1)) on demo-en, "
        f"posterior interval only ({time.perf_counter() - t0:.0f} s)"
    )
    for name, outs in results.items():
        print(_line(name, _summary(outs, args.margin)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=("mmlu-pro", "oll-arc"), action="append")
    parser.add_argument("--folds", type=int, default=None)
    parser.add_argument("--max-folds", type=int, default=None, help="Run only the first folds.")
    parser.add_argument("--pairs", type=int, default=None, help="Pairs per fold (seeded sample).")
    parser.add_argument(
        "--per-stratum", type=int, default=None, help="Pairs per fold per stratum of |Δ|."
    )
    parser.add_argument(
        "--references", type=int, default=None, help="Calibrate on this many models per fold."
    )
    parser.add_argument("--repeats", type=int, default=5, help="Draws per pair for arm (c).")
    parser.add_argument("--margin", type=float, default=0.01)
    parser.add_argument("--max-length", type=int, default=250)
    parser.add_argument("--min-length", type=int, default=30)
    parser.add_argument("--cross-fit-lengths", default="100,250")
    parser.add_argument(
        "--sims", type=int, default=200, help="Pairs of equal simulated models (0: none)."
    )
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.sims:
        simulated(min(args.sims, 40) if args.quick else args.sims, args)
    if not SHARED.is_dir():
        raise SystemExit(f"shared data not found at {SHARED}")
    for folder in args.data or ["mmlu-pro", "oll-arc"]:
        local = argparse.Namespace(**vars(args))
        if local.folds is None:
            local.folds = 4 if folder == "mmlu-pro" else 5
        if local.pairs is None and folder == "oll-arc":
            local.pairs = 60
        if args.quick:
            local.max_folds = local.max_folds or 1
            local.pairs = min(local.pairs or 28, 28)
        run(folder, local)


if __name__ == "__main__":
    main()
