"""``cat pool create``: a benchmark's file to a calibrated pool in one resumable job.

Three steps, each the one a user could run alone: the questions imported
(``cat pool import questions``), every reference model asked every question
(``cat synth``, its protocol recorded) and the pool calibrated on their answers
(``cat calibrate --pool``). The work goes into the pool folder: the references' calls
in ``references/run.db`` (every reply stored as it arrives), their response matrix in
``references/responses.jsonl`` and the job's state in ``references/create.json``,
written after each step. Killed at any point, the same command goes on from the last
step done and asks no stored call again.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cat.errors import CatError
from cat.pools.importer import ImportedQuestions, import_questions
from itempool import ITEMS, ITEMS_GZ, MANIFEST, check_pool
from itempool.atomic import write_text_atomic

if TYPE_CHECKING:
    from cat.pools.calibration_job import CalibrationOutcome
    from synth.estimate import SynthesisEstimate
    from synth.generation import GenerationSettings
    from synth.job import SynthesisReport
    from synth.runner import RunProgress

#: The folder of the pool that holds the references' calls, answers and the job's state.
WORK_FOLDER = "references"
STATE = "create.json"
STORE = "run.db"
RESPONSES = "responses.jsonl"

#: ``(description, completed, total)``: one display for the whole job; ``total`` None
#: while a step's size is unknown.
CreationProgress = Callable[[str, float | None, float | None], None]


@dataclass(frozen=True)
class PoolRecipe:
    """What a pool is made from: the questions and how they are read (``source`` to
    ``merge_duplicates``, as ``cat pool import questions`` takes them), who answers them
    (``references``: "MODEL" on ``base_url`` or "MODEL@URL"; ``participants`` as ``cat
    synth`` takes them; ``generation``: how they are asked) and the calibration
    (``model``, ``seed``)."""

    source: Path
    out: Path
    language: str
    references: tuple[str, ...]
    base_url: str | None = None
    name: str | None = None
    mapping: dict[str, str] = field(default_factory=dict)
    split: str | None = None
    merge_duplicates: bool = False
    participants: tuple[str, ...] = ("singles", "pairs")
    generation: GenerationSettings | None = None
    model: str = "3pl"
    seed: int = 0

    def questions_record(self) -> dict[str, Any]:
        """What decides the pool's questions: a pool made from other questions is another
        pool, so a rerun that differs here is refused."""
        return {
            "source": self.source.name,
            "source_sha256": content_hash(self.source),
            "language": str(self.language),
            "name": self.name or self.out.name,
            "mapping": dict(sorted(self.mapping.items())),
            "split": self.split,
            "merge_duplicates": self.merge_duplicates,
        }

    def answers_record(self) -> dict[str, Any]:
        """What decides the answers and the calibration: a rerun that differs here
        asks what is missing (the store keeps the rest) and calibrates again. Not the
        endpoint: the same model elsewhere gives the same answers (its calls' keys)."""
        generation = None if self.generation is None else self.generation.model_dump(mode="json")
        return {
            "references": list(self.references),
            "participants": list(self.participants),
            "generation": generation,
            "model": self.model,
            "seed": self.seed,
        }


@dataclass(frozen=True)
class CreatedPool:
    """What a run of ``create_pool`` did: each step's outcome, None for a step an earlier
    run had done (``imported``), or that had nothing left to do (all three None: the
    pool was made already)."""

    folder: Path
    imported: ImportedQuestions | None
    answered: SynthesisReport | None
    calibrated: CalibrationOutcome | None
    resumed: bool

    @property
    def work(self) -> Path:
        return self.folder / WORK_FOLDER


def read_reference_models(path: Path) -> tuple[str, ...]:
    """``--reference-models FILE``: one model a line ("MODEL" on the job's endpoint, or
    "MODEL@URL"); blank lines and text after ``#`` are skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CatError(
            f"--reference-models {path}: no such file (list the models one a line, "
            "MODEL or MODEL@URL)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CatError(f"--reference-models {path}: cannot read it ({exc})") from exc
    models: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        model = line.split("#", 1)[0].strip()
        if not model:
            continue
        if "," in model or " " in model:
            raise CatError(f"{path}:{number}: one model a line, got {model!r}")
        if model in models:
            raise CatError(f"{path}:{number}: {model} is listed twice")
        models.append(model)
    if not models:
        raise CatError(f"{path}: no model (list them one a line, MODEL or MODEL@URL)")
    return tuple(models)


def content_hash(path: Path) -> str:
    """The SHA-256 of a file, or of a folder's files (names and contents, in order): a
    rerun on an edited benchmark is told so rather than mixed with the old one."""
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        digest.update(str(file.relative_to(path) if file != path else file.name).encode())
        try:
            with file.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
        except OSError as exc:
            raise CatError(f"{file}: cannot read it ({exc.strerror or exc})") from exc
    return digest.hexdigest()


def create_pool(
    recipe: PoolRecipe,
    *,
    concurrency: int = 8,
    api_key_env: str | None = None,
    timeout: float = 60.0,
    max_attempts: int = 6,
    prices: Path | None = None,
    progress: CreationProgress | None = None,
) -> CreatedPool:
    """Make the pool ``recipe.out`` from ``recipe.source``, or go on with the one an
    earlier run began (see the module). Raises ``CatError`` before any call on bad input:
    a folder holding a pool that this job did not make, questions other than the ones
    the pool was begun with, a missing file."""
    from synth.job import run_synthesis
    from synth.names import DEFAULT_KEY_ENV

    show = progress or (lambda description, completed, total: None)
    if not recipe.source.exists():
        raise CatError(f"{recipe.source}: no such file or folder")
    if len(recipe.references) < 2 and "pairs" in recipe.participants:
        raise CatError("pairs need two reference models or more; list more, or ask singles only")
    folder, work = recipe.out, recipe.out / WORK_FOLDER
    show("reading the questions", None, None)
    questions = recipe.questions_record()
    state = _begun(folder, questions)
    resumed = state is not None
    answers = recipe.answers_record()
    if state is not None and state.get("stage") == "calibrated":
        if state.get("answers") == answers:
            return CreatedPool(folder, None, None, None, resumed)
        # Other references or settings: the pool is not made until it is calibrated again
        # (a kill in between must not leave it called made).
        state = {"questions": questions, "stage": "imported"}
        _write_state(work, state)
    _check_endpoints(recipe, api_key_env or DEFAULT_KEY_ENV)  # before anything is written
    imported = None
    if state is None or state.get("stage") == "importing":
        _write_state(work, {"questions": questions, "stage": "importing"})
        _remove_partial_pool(folder)  # a kill mid-import left part of it
        imported = _import(recipe, folder)
        state = {"questions": questions, "stage": "imported"}
        _write_state(work, state)

    def on_calls(p: RunProgress) -> None:
        show("asking the references (calls)", p.done, p.total)

    show("asking the references", None, None)
    answered = run_synthesis(
        folder,
        ",".join(recipe.references),
        store=work / STORE,
        out=work / RESPONSES,
        base_url=recipe.base_url,
        participants=recipe.participants,
        generation=recipe.generation,
        seed=recipe.seed,
        concurrency=concurrency,
        prices=prices,
        api_key_env=api_key_env or DEFAULT_KEY_ENV,
        timeout=timeout,
        max_attempts=max_attempts,
        progress=on_calls,
    )
    _check_answers(answered)
    calibrated = _calibrate(recipe, show)
    _check_calibrated(folder, answered)
    _write_state(work, {"questions": questions, "answers": answers, "stage": "calibrated"})
    return CreatedPool(folder, imported, answered, calibrated, resumed)


def estimate_creation(recipe: PoolRecipe, prices: Path | None = None) -> SynthesisEstimate:
    """What ``create_pool`` would ask the references (``synth.estimate``), with no call
    and nothing written: the questions are read into a temporary pool, and the calls a
    begun job's store holds already are counted apart."""
    from synth.estimate import dry_run
    from synth.job import prepare_run

    if not recipe.source.exists():
        raise CatError(f"{recipe.source}: no such file or folder")
    _begun(recipe.out, recipe.questions_record())  # refused as the job itself would be
    with tempfile.TemporaryDirectory() as scratch:
        pool = Path(scratch) / "pool"
        _import(recipe, pool)
        begun = recipe.out / WORK_FOLDER / STORE
        plan = prepare_run(
            pool,
            ",".join(recipe.references),
            store=begun if begun.is_file() else Path(scratch) / STORE,
            out=Path(scratch) / RESPONSES,
            base_url=recipe.base_url,
            participants=recipe.participants,
            generation=recipe.generation,
            seed=recipe.seed,
            prices=prices,
            offline=True,
        )
        return dry_run(plan)


def _import(recipe: PoolRecipe, folder: Path) -> ImportedQuestions:
    """The recipe's questions as a pool in ``folder``, named as the pool it makes."""
    return import_questions(
        recipe.source,
        recipe.mapping,
        folder,
        recipe.name or recipe.out.name,
        recipe.language,
        split=recipe.split,
        merge_duplicates=recipe.merge_duplicates,
    )


def _check_endpoints(recipe: PoolRecipe, api_key_env: str) -> None:
    """Each reference's URL well formed and answering, its key at hand: a typo is told
    before the pool folder is made, not after the import."""
    from synth.backend import api_key, check_reachable
    from synth.participants import parse_agents

    agents = parse_agents(",".join(recipe.references), recipe.base_url)
    for url in sorted({agent.base_url for agent in agents}):
        api_key(url, api_key_env)
        check_reachable(url)


def _begun(folder: Path, questions: dict[str, Any]) -> dict[str, Any] | None:
    """The state of the job an earlier run began in ``folder``, or None when there is
    none; refused: a pool this job did not make, or one made from other questions."""
    state_path = folder / WORK_FOLDER / STATE
    if state_path.is_file():
        try:
            state = json.loads(state_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CatError(f"{state_path}: cannot read it ({exc})") from exc
        before = state.get("questions", {})
        changed = [key for key in questions if before.get(key) != questions[key]]
        if changed:
            key = changed[0]
            what = "the file's content" if key == "source_sha256" else key
            raise CatError(
                f"{folder} was begun from other questions ({what}: {before.get(key)!r} "
                f"then, {questions[key]!r} now); choose a new folder for these"
            )
        return dict(state)
    if any((folder / name).exists() for name in (MANIFEST, ITEMS, ITEMS_GZ)):
        raise CatError(
            f"{folder} holds a pool that cat pool create did not make; choose a new folder "
            f"(or ask references with cat synth --pool {folder} and calibrate it with "
            "cat calibrate --pool)"
        )
    if folder.exists() and not folder.is_dir():
        raise CatError(f"{folder}: a file, not a folder")
    return None


def _remove_partial_pool(folder: Path) -> None:
    for name in (ITEMS, ITEMS_GZ, MANIFEST):
        (folder / name).unlink(missing_ok=True)


def _write_state(work: Path, state: dict[str, Any]) -> None:
    try:
        work.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CatError(f"cannot create the folder {work} ({exc.strerror or exc})") from exc
    write_text_atomic(work / STATE, json.dumps(state, indent=2, ensure_ascii=False) + "\n")


def _check_answers(report: SynthesisReport) -> None:
    """Refuse to calibrate on references whose calls failed: a matrix with holes where
    the endpoint was down says nothing of the items (rerun: the store asks only those)."""
    if report.failed_calls:
        raise CatError(
            f"{report.failed_calls:,} calls failed (the endpoint refused or timed out); "
            "run the same command again to ask them, the answers so far are stored"
        )


def _check_calibrated(folder: Path, answered: SynthesisReport) -> None:
    """Refuse to call a pool made that ``cat assess`` cannot load: on few references an
    unpenalised fit can send slopes below zero (the job stays where a rerun calibrates
    again)."""
    errors = [p for p in check_pool(folder) if not p.warning]
    if errors:
        raise CatError(
            f"the calibration on {len(answered.participants)} participants left "
            f"{len(errors)} problem{'s' if len(errors) > 1 else ''} in the pool (the first: "
            f"{errors[0]}): too few references to place the items; "
            "list more reference models, ask pairs too, or keep the priors (--model 3pl)"
        )


def _calibrate(recipe: PoolRecipe, show: CreationProgress) -> CalibrationOutcome:
    from cat.pools.calibration_job import DEFAULT_CROSS_FIT_FOLDS, calibrate

    def on_fit(done: float, status: str) -> None:
        show(f"calibrating: {status}", done, 1.0)

    def on_cross_fit(what: str, done: float) -> None:
        show(f"calibrating: cross-fit: {what}", done, 1.0)

    show(f"calibrating {recipe.model}", 0.0, 1.0)
    return calibrate(
        recipe.out / WORK_FOLDER / RESPONSES,
        model=recipe.model,
        pool=recipe.out,
        cross_fit=DEFAULT_CROSS_FIT_FOLDS,
        cross_fit_fallback=True,  # leave-one-out on few references
        seed=recipe.seed,
        progress=on_fit,
        cross_fit_progress=on_cross_fit,
        score_subjects=False,
    )


def participant_count(references: Sequence[str], participants: Sequence[str]) -> int:
    """How many subjects the calibration gets: each reference alone, each ordered pair."""
    n = len(references)
    return (n if "singles" in participants else 0) + (n * (n - 1) if "pairs" in participants else 0)
