"""One EM loop, accelerated by SQUAREM (Varadhan & Roland 2008, scheme S3), for every
calibrator of the package.

A model family describes EM on a flat vector x of its free parameters in two steps: the
E-step at x (``EMProblem.evaluate``: the log posterior at x — the marginal
log-likelihood plus the log prior — and whatever expected counts its M-step needs) and
the M-step (``EMProblem.update``: the next vector F(x) from that evaluation).
``run_em`` iterates F to its fixed point:

- **Stopping rule:** stop when a plain EM step moves no coordinate more than ``tol``
  (R mirt's rule; the family may measure the move on its own scale,
  ``EMProblem.change``). Or stop on a ridge: the log posterior rose by less than
  ``tol`` a cycle over the last ``LOGLIK_WINDOW`` M-steps (its best value so far, so
  that a refused jump does not count as a fall) while the parameter that moved most
  over them moves steadily: the same way, and at least ``STEADY`` as far, as over the
  ``LOGLIK_WINDOW`` M-steps before (looked at once a window, on three copies of the
  vector). Near a regular optimum every move shrinks geometrically; a move that does
  not, while the likelihood gains nothing, runs along a ridge where the data hardly
  inform the parameter (a slope of an item that is nearly deterministic given the
  factors, a difficulty without priors on few subjects) and would go on to the cap.
  The run names that parameter (``EMRun.drift``; the family's ``describe_move``, when
  it has one) and is reported as not converged, as is one that reaches ``max_iter``
  M-steps. Where the E-step's rounding (``slack``) could hide such rises, only the cap
  stops a ridge.
- **Acceleration:** from x0, two plain steps x1 = F(x0), x2 = F(x1) give r = x1 − x0 and
  v = x2 − 2·x1 + x0; the jump x0 + 2αr + α²v, α = ‖r‖/‖v‖, is kept when its log
  posterior is no lower than x2's (less ``slack`` of its size, for E-steps that round),
  and the loop goes on from x2 otherwise, so it never loses ground to plain EM. A kept
  jump's E-step is the next step's, so the extrapolation costs one E-step. α is never
  above ``MAX_EXTRAPOLATION``.
- **Stabilised steps** (``stabilise=True``, for the multidimensional and bifactor
  models), as in R's SQUAREM package: the jump is priced against x1 rather than x2 (so
  x2 needs no E-step) and followed by one plain step F(jump), which is where the loop
  goes on; a jump below x1 is still kept when F(jump) climbs back above it. Without
  the ramp below, the jump may also stop short of x2 (α = ‖r‖/‖v‖ < 1).
- **A growing step cap** (``ramp=True``, with stabilised steps; for the bifactor, whose
  slopes a long early jump flings across sign): α_max starts at 1, grows fourfold
  whenever a jump at the cap is kept and drops to a quarter of a refused jump's α, so an
  overshooting length is not proposed again and again.

The free steps keep the one-θ fits' cycle counts (MMLU-Pro 3PL: 23; 2,000 × 50 graded:
11); with the ramp the MMLU-Pro bifactor 2PL takes 73 cycles against 150 free ones; the
multidimensional guide's exploratory two-factor 3PL takes 49 stabilised cycles without
the ramp against about 200 free ones, with the ramp, or with α held at 1 or more.

``n_iter`` counts M-steps (the EM map's evaluations), as R mirt counts cycles.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

import numpy as np

from irt.estimation.arrays import to_numpy
from irt.types import FloatArray

#: The SQUAREM step is at most this many plain EM steps long.
MAX_EXTRAPOLATION = 64.0

#: The ridge rule looks at the log posterior's rise over this many M-steps, and at the
#: parameters' moves over twice as many: long enough that a regular approach, however
#: SQUAREM's jumps vary its steps, has settled first (R mirt's SAT12 bifactor, the
#: slowest of its tests here, settles in 80).
LOGLIK_WINDOW = 50

#: A coordinate whose move over the last ``LOGLIK_WINDOW`` M-steps is still at least
#: this share of its move over the window before moves steadily (a regular approach at
#: rate 0.993 a step, or faster, shrinks it more).
STEADY = 0.7

#: Called after every cycle with (cycle number, log-likelihood at the cycle's start,
#: largest parameter change of the cycle).
ProgressCallback = Callable[[int, float, float], None]


class Evaluation(Protocol):
    """An E-step's result: at least the log posterior (what EM never lowers) and the
    log-likelihood (what progress reports) at the vector it was computed at."""

    @property
    def logpost(self) -> float: ...

    @property
    def loglik(self) -> float: ...


E = TypeVar("E", bound=Evaluation)


class _HasLoglik(Protocol):
    @property
    def loglik(self) -> float: ...


S = TypeVar("S", bound=_HasLoglik)


@dataclass(frozen=True)
class Evaluated(Generic[S]):
    """The usual ``Evaluation``: an E-step's result ``step`` (which knows its
    log-likelihood) with the log posterior at its vector."""

    step: S
    logpost: float

    @property
    def loglik(self) -> float:
        return self.step.loglik


class EMProblem(Protocol[E]):
    """What the loop needs of a model family on its flat parameter vector."""

    def evaluate(self, x: FloatArray) -> E:
        """The E-step at ``x``."""
        ...

    def update(self, x: FloatArray, evaluation: E) -> FloatArray:
        """The M-step: F(``x``) from the E-step at ``x``."""
        ...

    def clip(self, x: FloatArray) -> FloatArray:
        """``x`` brought inside the parameter space (an extrapolated jump may leave it)."""
        ...

    def change(self, new: FloatArray, old: FloatArray) -> float:
        """How far a step moved the parameters, on the scale ``tol`` is given in."""
        ...


@dataclass(frozen=True)
class Drift:
    """The parameter an M-step moved most: its ``name`` (e.g. "specific slope of item
    matrix.45"), its ``value`` after the step and the step ``per_cycle``."""

    name: str
    value: float
    per_cycle: float

    def __str__(self) -> str:
        return f"{self.name}: {self.value:.4g}, {self.per_cycle:+.1e} a cycle"


class DescribesMoves(Protocol):
    """A family that can name the parameter a step moved most."""

    def describe_move(self, new: FloatArray, old: FloatArray) -> Drift:
        """The parameter that moved most from ``old`` to ``new``, on the scale of
        ``EMProblem.change``."""
        ...


def max_abs_change(new: FloatArray, old: FloatArray) -> float:
    """The usual ``EMProblem.change``: the largest move of one coordinate."""
    return float(np.max(np.abs(new - old))) if new.size else 0.0


#: Why a run stopped: no parameter moved more than ``tol``; the log posterior stopped
#: rising while a parameter still moved; the cycle cap.
STOPPED_PARAMETERS = "parameters"
STOPPED_LOGLIK = "log-likelihood"
STOPPED_CAP = "cycle cap"


@dataclass
class EMRun(Generic[E]):
    """The loop's result: the last vector and the E-step at it, the M-steps run,
    whether the stopping rule was met, why the run stopped (``STOPPED_*``), the
    parameter still moving when the log posterior had stopped (``drift``, None unless
    ``stopped`` is ``STOPPED_LOGLIK``), and the log posterior at every M-step's start
    and at the end (``trace``, one longer than ``n_iter``)."""

    x: FloatArray
    evaluation: E
    n_iter: int = 0
    converged: bool = False
    trace: list[float] = field(default_factory=list)
    stopped: str = ""
    drift: Drift | None = None


def run_em(
    problem: EMProblem[E],
    start: FloatArray,
    *,
    tol: float,
    max_iter: int,
    accelerate: bool = True,
    stabilise: bool = False,
    ramp: bool = False,
    slack: float = 0.0,
    progress: ProgressCallback | None = None,
) -> EMRun[E]:
    """EM steps of ``problem`` from ``start`` until a plain step moves less than
    ``tol``, the log posterior stops rising (less than ``tol`` a cycle over
    ``LOGLIK_WINDOW`` M-steps) or ``max_iter`` steps ran; SQUAREM-accelerated unless
    ``accelerate`` is false; ``stabilise`` and ``ramp`` choose the step control the
    module's docstring describes.
    ``slack``: the relative rounding of the family's log posterior, which a jump
    may lose and still be kept."""
    run: EMRun[E] = EMRun(x=start, evaluation=problem.evaluate(start))
    last_step: list[FloatArray] = []  # the latest M-step's (new, old)
    # Where M-steps 1, 1 + LOGLIK_WINDOW, 1 + 2·LOGLIK_WINDOW … (the latest three)
    # started: three copies of the vector, not a window of them (400,000 coordinates
    # at scale).
    starts: deque[FloatArray] = deque(maxlen=3)
    due: list[int] = []  # the M-step whose start the last of ``starts`` is, until checked

    def update(x: FloatArray, at_x: E) -> tuple[FloatArray, float]:
        """The M-step from x: F(x) and how far it moved."""
        new = problem.update(x, at_x)
        run.n_iter += 1
        run.trace.append(at_x.logpost)
        last_step[:] = [new, x]
        if run.n_iter % LOGLIK_WINDOW == 1:
            starts.append(np.array(to_numpy(x), dtype=np.float64))
            due[:] = [run.n_iter]  # the check waits for the next ``stop``
        change = problem.change(new, x)
        if progress is not None:
            progress(run.n_iter, at_x.loglik, change)
        return new, change

    def stop(change: float) -> str:
        """Why the run stops after an M-step that moved ``change`` ("": it goes on)."""
        if change < tol:
            return STOPPED_PARAMETERS
        window, flat = LOGLIK_WINDOW, tol * LOGLIK_WINDOW
        # Looked at once a window, when one has begun (the last of ``starts``), and not
        # where the E-step's rounding (``slack`` on each value compared) hides such rises.
        if due and len(starts) == starts.maxlen:
            at = due.pop()
            # The best log posterior by then (a refused jump is not a fall).
            best, before = max(run.trace[:at]), max(run.trace[: at - window])
            if flat > 2 * slack * abs(best) and best - before < flat and _steady(starts):
                return STOPPED_LOGLIK
        return STOPPED_CAP if run.n_iter >= max_iter else ""

    def done(x: FloatArray, at_x: E | None, why: str) -> EMRun[E]:
        at_x = problem.evaluate(x) if at_x is None else at_x
        run.x, run.evaluation, run.stopped = x, at_x, why
        run.converged = why == STOPPED_PARAMETERS
        if why == STOPPED_LOGLIK:
            run.drift = _describe_move(problem, *last_step)
        run.trace.append(at_x.logpost)
        return run

    x, at_x = start, run.evaluation
    # A ramped α_max grows without bound while jumps at it are kept (R's SQUAREM).
    step_max = 1.0 if stabilise and ramp else MAX_EXTRAPOLATION
    while True:
        x1, change = update(x, at_x)
        at_x1 = problem.evaluate(x1)
        if why := stop(change):
            return done(x1, at_x1, why)
        if not accelerate:
            x, at_x = x1, at_x1
            continue
        x2, change = update(x1, at_x1)
        if why := stop(change):
            return done(x2, None, why)
        r = x1 - x
        v = x2 - 2 * x1 + x
        norm_v = float(np.linalg.norm(v))
        ratio = float(np.linalg.norm(r)) / norm_v if norm_v > 0 else 0.0
        if not stabilise and ratio <= 1.0:
            # The jump would be no longer than x2 itself: plain EM.
            x, at_x = x2, problem.evaluate(x2)
            continue
        # With the ramp, α = 1 is x2 itself, which the stabilising step carries one plain
        # step further and which, kept, lets α_max grow. Without it a stabilised jump may
        # also stop short of x2 (α < 1): on an exploratory two-factor 3PL (the
        # multidimensional guide's) that converges in 49 cycles, against 209 from x2.
        alpha = min(max(ratio, 1.0), step_max) if ramp else min(ratio, step_max)
        jump = problem.clip(x + 2 * alpha * r + alpha**2 * v)
        at_jump = problem.evaluate(jump)
        if not stabilise:
            at_x2 = problem.evaluate(x2)
            if _at_least(at_jump, at_x2, slack):
                x, at_x = jump, at_jump
            else:
                x, at_x = x2, at_x2
            continue
        # Stabilised: the jump is priced against x1 (no E-step at x2 unless the jump is
        # refused) and stabilised by one plain step, whose E-step the next round needs
        # anyway; a jump below x1 may still be kept if that step climbs back above it.
        landed, _ = update(jump, at_jump)
        at_landed = problem.evaluate(landed)
        kept = _at_least(at_jump, at_x1, slack) or _at_least(at_landed, at_x1, slack)
        if kept:
            x, at_x = landed, at_landed
            if ramp and alpha == step_max:
                step_max *= 4.0
        else:
            x, at_x = x2, problem.evaluate(x2)
            if ramp:
                step_max = max(1.0, alpha / 4.0)
        if run.n_iter >= max_iter:
            return done(x, at_x, STOPPED_CAP)


def _steady(starts: deque[FloatArray]) -> bool:
    """Whether the coordinate that moved most between the last two of ``starts`` moved
    the same way between the two before, by no more than 1 / ``STEADY`` times as far."""
    first, middle, last = starts
    now, before = last - middle, middle - first
    k = int(np.argmax(np.abs(now)))
    return bool(now[k] * before[k] > 0 and abs(before[k]) * STEADY <= abs(now[k]))


def _describe_move(problem: object, new: FloatArray, old: FloatArray) -> Drift:
    """The parameter the last M-step moved most, named by the family when it can
    (``DescribesMoves``), else by its place in the vector."""
    describe = getattr(problem, "describe_move", None)
    if describe is not None:
        return describe(new, old)  # type: ignore[no-any-return]
    now = np.asarray(to_numpy(new), dtype=np.float64).ravel()
    step = now - np.asarray(to_numpy(old), dtype=np.float64).ravel()
    k = int(np.argmax(np.abs(step)))
    return Drift(f"coordinate {k} of the parameter vector", float(now[k]), float(step[k]))


def _at_least(candidate: Evaluation, reference: Evaluation, slack: float) -> bool:
    """Whether ``candidate``'s log posterior is finite and no lower than ``reference``'s,
    less ``slack`` of its size."""
    floor = reference.logpost - slack * abs(reference.logpost)
    return bool(np.isfinite(candidate.logpost) and candidate.logpost >= floor)
