"""Paths that cannot be what a command needs are refused at once, in one line (defect 20).

- A pool folder given as a file (``cat assess --pool nana.csv``) is named as a file, not
  as a missing folder, by every command that takes a pool.
- An output that cannot be written (a file output that is an existing folder or whose
  folder does not exist; a folder output that is an existing file) is refused before any
  work, naming the option: the work functions are replaced by spies that must not run,
  and nothing else is written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from cat.errors import CatError
from cat.pools.loading import check_output_folders, output_file_problem, output_folder_problem

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "item_pools" / "demo-en"
MINI = REPO / "examples" / "mini_pool"
RESPONSES = REPO / "examples" / "responses.jsonl"
SCORED = REPO / "examples" / "scored_responses.jsonl"
SIMILARITY = REPO / "examples" / "similarity.jsonl"

NOT_A_POOL = "a file, not a pool folder (a pool folder holds pool.json and items.jsonl)"

#: The functions that do each command's work, looked up where the commands import them
#: (inside their bodies, so a replacement in the module is what they call).
WORK = [
    "cat.pools.calibration_job.calibrate",
    "cat.engine.simulate_job.simulate",
    "cat.validation.report.validate",
    "cat.assessment.assess.assess",
    "cat.pools.loading.load_pool",
    "cat.pools.loading.read_pool_questions",
    "cat.pools.fit.fit_pool",
    "cat.pools.importer.import_questions",
    "cat.pools.importer.import_lm_eval",
    "cat.pools.recalibration_job.recalibrate_pool",
    "synth.job.prepare_run",
    "synth.job.run_synthesis",
    "catdemo.run.run_demo",
]


def _invoke(args: list[str | Path]) -> tuple[int, str]:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def _files(folder: Path) -> set[Path]:
    return set(folder.rglob("*"))


# ---------------------------------------------------------------------------------------
# A file given for a pool folder
# ---------------------------------------------------------------------------------------

POOL_OPTIONS = {
    "assess --pool": ["assess", "--pool", "{pool}", "--model", "sim:0"],
    "pool info": ["pool", "info", "{pool}"],
    "pool diff": ["pool", "diff", DEMO, "{pool}"],
    "pool fit": ["pool", "fit", "{pool}", RESPONSES],
    "recalibrate --pool": ["recalibrate", RESPONSES, "--pool", "{pool}", "--out", "new"],
    "synth --pool": [
        "synth",
        *("--pool", "{pool}", "--agents", "good", "--base-url", "http://127.0.0.1:9/v1"),
        *("--store", "r.db", "--out", "r.jsonl"),
    ],
    "demo --pool": ["demo", "--pool", "{pool}", "--work", "work"],
}


@pytest.mark.parametrize("args", POOL_OPTIONS.values(), ids=POOL_OPTIONS.keys())
def test_a_file_for_a_pool_folder_is_named_as_a_file(
    args: list[str | Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    nana = tmp_path / "nana.csv"
    nana.write_text("id,question\n")
    code, output = _invoke([nana if a == "{pool}" else a for a in args])
    assert code == 2
    assert output.strip().splitlines() == [f"error: {nana}: {NOT_A_POOL}"]
    assert _files(tmp_path) == {nana}


def test_calibrate_names_its_pool_option(tmp_path: Path) -> None:
    nana = tmp_path / "nana.csv"
    nana.write_text("id,question\n")
    code, output = _invoke(["calibrate", RESPONSES, "--pool", nana])
    assert code == 2
    assert output.strip().splitlines() == [f"error: --pool {nana}: {NOT_A_POOL}"]


def test_pool_validate_lists_a_file_as_its_one_problem(tmp_path: Path) -> None:
    nana = tmp_path / "nana.csv"
    nana.write_text("id,question\n")
    code, output = _invoke(["pool", "validate", nana])
    assert code == 2
    assert output.strip().splitlines() == [f"{nana}: {NOT_A_POOL}", f"pool {nana}: 1 problem"]


def test_a_pool_file_given_for_its_folder_points_to_the_folder() -> None:
    code, output = _invoke(["pool", "info", DEMO / "pool.json"])
    assert code == 2
    assert output.strip() == f"error: {DEMO / 'pool.json'}: {NOT_A_POOL}; give its folder {DEMO}"


def test_a_missing_pool_folder_is_one_plain_line(tmp_path: Path) -> None:
    code, output = _invoke(["assess", "--pool", tmp_path / "nope", "--model", "sim:0"])
    assert code == 2
    assert output.strip() == f"error: {tmp_path / 'nope'}: no such folder"


# ---------------------------------------------------------------------------------------
# Outputs
# ---------------------------------------------------------------------------------------

FOLDER_FOR_FILE = "a folder, not a file"
FILE_FOR_FOLDER = "not a folder"

# (command line, the option refused, what it is given, why). In a command line, {folder}
# is an existing folder, {file} an existing file, {missing} a path in a missing folder.
OUTPUT_CASES: dict[str, tuple[list[str | Path], str, str, str]] = {
    "calibrate --out folder": (
        ["calibrate", RESPONSES, "--out", "{folder}"],
        "--out",
        "{folder}",
        FOLDER_FOR_FILE,
    ),
    "calibrate --report folder": (
        ["calibrate", RESPONSES, "--out", "p.csv", "--report", "{folder}"],
        "--report",
        "{folder}",
        FOLDER_FOR_FILE,
    ),
    "calibrate --model graded --abilities folder": (
        ["calibrate", SCORED, "--model", "graded", "--out", "p.csv", "--abilities", "{folder}"],
        "--abilities",
        "{folder}",
        FOLDER_FOR_FILE,
    ),
    "calibrate --continuous-out folder": (
        [
            *("calibrate", SCORED, "--model", "graded", "--continuous", SIMILARITY),
            *("--out", "p.csv", "--continuous-out", "{folder}"),
        ],
        "--continuous-out",
        "{folder}",
        FOLDER_FOR_FILE,
    ),
    "calibrate --model beta --out missing folder": (
        ["calibrate", SIMILARITY, "--model", "beta", "--out", "{missing}"],
        "--out",
        "{missing}",
        "folder {missing_parent} does not exist",
    ),
    "simulate --out folder": (
        ["simulate", "--params", DEMO / "params.csv", "--examinees", "5", "--out", "{folder}"],
        "--out",
        "{folder}",
        FOLDER_FOR_FILE,
    ),
    "validate --out folder": (
        ["validate", RESPONSES, "--out", "{folder}"],
        "--out",
        "{folder}",
        FOLDER_FOR_FILE,
    ),
    "assess --out folder": (
        ["assess", "--pool", DEMO, "--model", "sim:0", "--out", "{folder}"],
        "--out",
        "{folder}",
        FOLDER_FOR_FILE,
    ),
    "assess --report file": (
        ["assess", "--pool", DEMO, "--model", "sim:0", "--out", "r.json", "--report", "{file}"],
        "--report",
        "{file}",
        FILE_FOR_FOLDER,
    ),
    "assess --store folder": (
        ["assess", "--pool", DEMO, "--model", "sim:0", "--store", "{folder}"],
        "--store",
        "{folder}",
        FOLDER_FOR_FILE,
    ),
    "pool info --json folder": (
        ["pool", "info", DEMO, "--json", "{folder}"],
        "--json",
        "{folder}",
        FOLDER_FOR_FILE,
    ),
    "pool diff --json missing folder": (
        ["pool", "diff", DEMO, DEMO, "--json", "{missing}"],
        "--json",
        "{missing}",
        "folder {missing_parent} does not exist",
    ),
    "pool fit --out folder": (
        ["pool", "fit", DEMO, RESPONSES, "--out", "{folder}"],
        "--out",
        "{folder}",
        FOLDER_FOR_FILE,
    ),
    "pool import questions --out file": (
        ["pool", "import", "questions", RESPONSES, "--language", "en", "--out", "{file}"],
        "--out",
        "{file}",
        FILE_FOR_FOLDER,
    ),
    "pool import lm-eval --out folder": (
        ["pool", "import", "lm-eval", RESPONSES, "--out", "{folder}"],
        "--out",
        "{folder}",
        FOLDER_FOR_FILE,
    ),
    "pool import lm-eval --out under a file": (
        ["pool", "import", "lm-eval", RESPONSES, "--out", "{file}/sub/r.jsonl"],
        "--out",
        "{file}/sub/r.jsonl",
        "cannot make folder {file}/sub: {file} is a file",
    ),
    "recalibrate --out file": (
        ["recalibrate", RESPONSES, "--pool", DEMO, "--out", "{file}"],
        "--out",
        "{file}",
        FILE_FOR_FOLDER,
    ),
    "synth --store folder": (
        [
            *("synth", "--pool", MINI, "--agents", "good", "--base-url", "http://127.0.0.1:9/v1"),
            *("--store", "{folder}", "--out", "r.jsonl"),
        ],
        "--store",
        "{folder}",
        FOLDER_FOR_FILE,
    ),
    "synth --report folder": (
        [
            *("synth", "--pool", MINI, "--agents", "good", "--base-url", "http://127.0.0.1:9/v1"),
            *("--store", "r.db", "--out", "r.jsonl", "--report", "{folder}"),
        ],
        "--report",
        "{folder}",
        FOLDER_FOR_FILE,
    ),
    "synth --batch-out file": (
        [
            *("synth", "--pool", MINI, "--agents", "good"),
            *("--store", "r.db", "--out", "r.jsonl", "--batch-out", "{file}"),
        ],
        "--batch-out",
        "{file}",
        FILE_FOR_FOLDER,
    ),
    "demo --work file": (["demo", "--work", "{file}"], "--work", "{file}", FILE_FOR_FOLDER),
}


def _spy(calls: list[str], name: str) -> Callable[..., object]:
    def work(*args: object, **kwargs: object) -> object:
        calls.append(name)
        raise RuntimeError(f"{name} ran before the outputs were checked")

    return work


@pytest.mark.parametrize(
    ("args", "option", "given", "why"), OUTPUT_CASES.values(), ids=OUTPUT_CASES.keys()
)
def test_an_unwritable_output_is_refused_before_any_work(
    args: list[str | Path],
    option: str,
    given: str,
    why: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # relative outputs (p.csv, r.db) land here, if anywhere
    folder, file = tmp_path / "existing", tmp_path / "existing.txt"
    folder.mkdir()
    file.write_text("keep me\n")
    names = {
        "folder": str(folder),
        "file": str(file),
        "missing": str(tmp_path / "no" / "out.json"),
        "missing_parent": str(tmp_path / "no"),
    }
    calls: list[str] = []
    for name in WORK:
        monkeypatch.setattr(name, _spy(calls, name))
    before = _files(tmp_path)
    code, output = _invoke([a.format(**names) if isinstance(a, str) else a for a in args])
    assert calls == []
    assert code == 2
    expected = f"error: {option} {given.format(**names)}: {why.format(**names)}"
    assert output.strip().splitlines() == [expected]
    assert _files(tmp_path) == before
    assert file.read_text() == "keep me\n"


def test_check_output_folders_refuses_a_folder(tmp_path: Path) -> None:
    """The library's check (``cat.calibrate`` and friends) refuses a folder as a file."""
    with pytest.raises(CatError) as info:
        check_output_folders(None, tmp_path)
    assert str(info.value) == f"cannot write {tmp_path}: a folder, not a file"
    with pytest.raises(CatError) as info:
        check_output_folders(tmp_path / "no" / "p.csv")
    assert str(info.value) == (
        f"cannot write {tmp_path / 'no' / 'p.csv'}: folder {tmp_path / 'no'} does not exist"
    )
    check_output_folders(None, tmp_path / "p.csv")


def test_output_problems(tmp_path: Path) -> None:
    file = tmp_path / "f.txt"
    file.write_text("")
    assert output_file_problem(tmp_path / "p.csv") is None
    assert output_file_problem(tmp_path / "a" / "b" / "p.csv", makes_folders=True) is None
    assert output_file_problem(file / "p.csv") == f"{file} is a file, not a folder"
    assert output_file_problem(file / "p.csv", makes_folders=True) == (
        f"cannot make folder {file}: {file} is a file"
    )
    assert output_folder_problem(tmp_path) is None
    assert output_folder_problem(tmp_path / "new" / "deeper") is None
    assert output_folder_problem(file) == "not a folder"
    assert output_folder_problem(file / "sub") == (
        f"cannot make folder {file / 'sub'}: {file} is a file"
    )
