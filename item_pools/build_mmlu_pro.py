"""Build the shipped MMLU-Pro pool, ``item_pools/mmlu-pro/``, from the shared data.

    python item_pools/build_mmlu_pro.py [DATA] [--out DIR] [--seed N] [--folds K]

DATA is the folder holding MMLU-Pro's ``items.csv.gz`` and ``responses.csv.gz``
(default ``../shared/data/mmlu-pro`` beside the repository; see its README). The pool
holds all 12,032 questions as single-choice items (options lettered A, B, ... in their
order; the original ``question_id`` is the item id and, with ``src``, kept in ``meta``),
the 14 categories as scenarios, in English. It is calibrated on the 32 reference models
exactly as ``cat calibrate RESPONSES --pool DIR`` does it, through the library: a 3PL by
EM under the default priors, the references' answers stored, and each design's
cross-fitted errors (K = 5 folds, lengths 100 and 250) stored, so that ``cat assess
--design auto`` chooses its design and sizes its interval by them. The seed is recorded
in ``pool.json``. The questions are MIT-licensed (TIGER-Lab/MMLU-Pro), the per-question
results Apache-2.0 (TIGER-AI-Lab/MMLU-Pro, ``eval_results/``); ``pool.json`` and the
pool's README say so.

The items are written gzipped (``items.jsonl.gz``, the same bytes on every run); the
calibration's ``pool.json`` entries carry the date and package version of the build.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = REPO.parent / "shared" / "data" / "mmlu-pro"
NAME = "mmlu-pro"
SEED = 20261128
FOLDS = 5
LENGTHS = (100, 250)
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
# Besides \n and \r, what str.splitlines breaks at; inside a JSON string they can only
# be text, so escaping them changes nothing a JSON reader sees.
LINE_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
QUESTIONS_URL = "https://huggingface.co/datasets/TIGER-Lab/MMLU-Pro"
RESULTS_URL = "https://github.com/TIGER-AI-Lab/MMLU-Pro/tree/main/eval_results"
SOURCES = [
    {"what": "the 12,032 test questions", "url": QUESTIONS_URL, "license": "MIT"},
    {
        "what": "per-question results of the 32 reference models (the official "
        "evaluation outputs, scored 1 where the extracted letter equals the key)",
        "url": RESULTS_URL,
        "license": "Apache-2.0",
    },
]

if str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


def read_items(path: Path) -> list[dict[str, Any]]:
    """The pool's items, one per row of MMLU-Pro's ``items.csv.gz``, in its order."""
    from itempool import PoolItem

    items = []
    with gzip.open(path, "rt", encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            options = json.loads(row["options"])
            if len(options) != int(row["n_options"]):
                raise SystemExit(f"{path}: question {row['question_id']}: n_options disagrees")
            record = {
                "id": row["question_id"],
                "scenario": row["category"],
                "type": "single",
                "question": row["question"],
                "options": {LETTERS[k]: text for k, text in enumerate(options)},
                "answer": row["answer"],
                "meta": {"question_id": int(row["question_id"]), "src": row["src"]},
            }
            PoolItem.model_validate(record)  # a bad row stops the build here
            items.append(record)
    return items


def jsonl_line(record: dict[str, Any]) -> str:
    """``record`` as one JSONL line: UTF-8 as is, but the characters other tools take for
    line breaks (U+0085 is in a few questions) escaped, so that the line stays one."""
    text = json.dumps(record, ensure_ascii=False)
    for char in LINE_BREAKS:
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text + "\n"


def manifest(items: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    """``pool.json`` before calibration: what the pool is, where it comes from."""
    counts: dict[str, int] = {}
    for record in items:
        counts[record["scenario"]] = counts.get(record["scenario"], 0) + 1
    return {
        "name": NAME,
        "version": "1",
        "language": "en",
        "description": "MMLU-Pro: 12,032 ten-option (some fewer) multiple-choice questions "
        "in 14 subject categories, calibrated on the official results of 32 LLMs",
        "scenarios": [
            {"id": name, "name_en": name.capitalize(), "n_items": counts[name]}
            for name in sorted(counts)
        ],
        "license": "MIT AND Apache-2.0",
        "sources": SOURCES,
        "generator": "item_pools/build_mmlu_pro.py",
        "seed": seed,
        "note": "item ids are MMLU-Pro's question_id; meta keeps question_id and src",
    }


def build(data: Path, out: Path, seed: int = SEED, folds: int = FOLDS) -> dict[str, Any]:
    """Write the pool into ``out`` (replacing what is there); the calibration's figures."""
    from mmlu_pro_protocol import with_protocol  # beside this script

    from cat.pools.calibration_job import calibrate
    from itempool import ITEMS_GZ, check_pool
    from itempool.item_files import write_text

    items = read_items(data / "items.csv.gz")
    # The official protocol's files (mmlu_pro_protocol.py wrote them from the validation
    # split, which the shared data lacks) survive the rebuild.
    protocol = out / "protocol"
    kept = {f.name: f.read_bytes() for f in protocol.iterdir()} if protocol.is_dir() else {}
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    entry = manifest(items, seed)
    if kept:
        protocol.mkdir()
        for name, content in kept.items():
            (protocol / name).write_bytes(content)
        entry = with_protocol(entry)
    (out / "pool.json").write_text(
        json.dumps(entry, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    lines = "".join(jsonl_line(record) for record in items)
    write_text(out / ITEMS_GZ, lines)
    print(f"{len(items)} items written; calibrating on {data / 'responses.csv.gz'}", flush=True)

    def follow(what: str, done: float) -> None:
        print(f"  cross-fit: {what} ({done:.0%})", flush=True)

    outcome = calibrate(
        data / "responses.csv.gz",
        model="3pl",
        pool=out,
        cross_fit=folds,
        cross_fit_lengths=LENGTHS,
        cross_fit_fallback=True,
        seed=seed,
        cross_fit_progress=follow,
    )
    problems = check_pool(out)
    if problems:
        raise SystemExit("the built pool has problems:\n" + "\n".join(map(str, problems)))
    report = outcome.report
    figures: dict[str, Any] = {
        "n_subjects": report.n_subjects,
        "n_items": report.n_items,
        "n_iter": report.n_iter,
        "converged": report.converged,
        "data_notes": report.data_notes,
        "design_errors": _design_mae(out),
        "auto": {n: chosen_design(out, n) for n in LENGTHS},
    }
    (out / "README.md").write_text(readme(figures, seed, folds), encoding="utf-8")
    return figures


def _design_mae(pool: Path) -> dict[str, dict[int, float]]:
    """Per design, the mean absolute cross-fitted error at each length (from pool.json)."""
    stored = json.loads((pool / "pool.json").read_text(encoding="utf-8"))["design_errors"]
    table: dict[str, dict[int, float]] = {}
    for design, errors in stored.items():
        table[design] = {
            int(length): sum(abs(e) for e in signed) / len(signed)
            for length, signed in errors["errors"].items()
        }
    return table


def chosen_design(pool: Path, length: int) -> str:
    """The design ``cat assess --design auto`` runs on the pool at ``length`` items (its
    own choice rule, on the errors stored)."""
    from cat.prediction.cross_fit import choose_design
    from itempool import load_pool

    errors = load_pool(pool).manifest.design_errors or {}
    return choose_design(dict(errors), length)


def readme(figures: dict[str, Any], seed: int, folds: int) -> str:
    """The pool's README.md: what it is, where it comes from, how it was built."""
    designs = figures["design_errors"]
    lengths = sorted({n for per in designs.values() for n in per})
    rows = "\n".join(
        f"| {design} | " + " | ".join(f"{per[n]:.4f}" for n in lengths) + " |"
        for design, per in designs.items()
    )
    auto = figures["auto"]
    header = " | ".join(f"{n} items" for n in lengths)
    notes = "".join(f"- {note}\n" for note in figures["data_notes"]) or "- none\n"
    return f"""# MMLU-Pro

All 12,032 questions of [MMLU-Pro]({QUESTIONS_URL}) (TIGER-Lab), as single-choice items
(up to ten options, lettered A-J in their original order), with the 14 subject
categories as scenarios, calibrated on the official per-question results of
{figures["n_subjects"]} language models ([MMLU-Pro `eval_results/`]({RESULTS_URL})):

    cat assess --pool mmlu-pro --model MODEL --base-url URL

## Licences and sources

| What | Source | Licence |
|---|---|---|
| the questions (`items.jsonl.gz`) | [TIGER-Lab/MMLU-Pro]({QUESTIONS_URL}) | MIT |
| the reference models' answers (`reference_answers.csv.gz`) and what is fitted \
to them (`params.csv`, `reference.jsonl`, `low_rank.csv`, the errors in `pool.json`) \
| [TIGER-AI-Lab/MMLU-Pro, `eval_results/`]({RESULTS_URL}) | Apache-2.0 |
| the worked examples of the official prompt (`protocol/examples.jsonl`, the \
validation split's `cot_content`) | [TIGER-Lab/MMLU-Pro]({QUESTIONS_URL}) | MIT |

`pool.json` records them (`license`, `sources`). The results are the models' chain-of-
thought answers scored 1 where the letter extracted from the reply equals the key (no
letter extracted: 0); an item a model has no result for is not answered.

## Protocol

The references were asked by MMLU-Pro's official evaluation, and `cat assess` asks a new
model the same way (`pool.json` `protocol`, shown by `cat pool info mmlu-pro`): one user
message with the official instruction for the question's category, the category's first
five worked examples (`protocol/examples.jsonl`) and the question
(`protocol/chat.jinja`, after `evaluate_from_api.py`); temperature 0, at most 4,000
tokens; the letter read by the official three rules. Its raw form
(`cat assess --protocol-form raw`, `protocol/raw.jinja`, after `evaluate_from_local.py`)
sends the same examples as one raw prompt to a completions endpoint, stop at
"Question:", at most 2,048 tokens, the letter read by the first two rules, as the
open-weight references were asked and graded; each form lists its references.
`item_pools/mmlu_pro_protocol.py` writes these files from the validation split.

## Contents

- `items.jsonl.gz`: the questions, gzipped. An item's `id` is MMLU-Pro's `question_id`;
  `meta` keeps `question_id` and `src` (the question's origin: `ori_mmlu-...`,
  `stemez-...`, `theoremQA-...`, `scibench-...`).
- `params.csv`: a 3PL by EM (the project's default priors on a, b and c), seed {seed};
  {figures["n_iter"]} EM cycles, converged: {figures["converged"]}.
- `reference.jsonl`: the {figures["n_subjects"]} reference models (θ by EAP, accuracy on
  the items each answered); `reference_answers.csv.gz`: their answers; `low_rank.csv`:
  the references' low-rank model.
- `pool.json` `design_errors`: each design's cross-fitted errors of the predicted
  accuracy ({folds} folds of the references, each replayed with the pool calibrated on the
  other folds), by which `cat assess --design auto` picks its design and sizes its 90%
  interval. Mean absolute error:

| design | {header} |
|---|{"---|" * len(lengths)}
{rows}

`--design auto` runs {", ".join(f"{auto[n]} at {n} items" for n in lengths)} (the
smallest error at the stored length nearest to the test's).

Notes on the data from the calibration:

{notes}
Some questions repeat in MMLU-Pro (358 question texts occur more than once, 159 of them
with the same options too); they are kept as they are.

## Rebuild

    python item_pools/build_mmlu_pro.py            # needs ../shared/data/mmlu-pro

writes this folder again from the shared data (the items byte for byte; the calibration
records its date and package version).
"""


def folder_size(folder: Path) -> int:
    """Bytes of the files in ``folder``."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DATA, help="MMLU-Pro data folder")
    parser.add_argument("--out", type=Path, default=HERE / NAME, help="the pool folder to write")
    parser.add_argument("--seed", type=int, default=SEED, help="seed of the cross-fit folds")
    parser.add_argument("--folds", type=int, default=FOLDS, help="cross-fit folds")
    args = parser.parse_args()
    if not (args.data / "items.csv.gz").is_file():
        raise SystemExit(f"no MMLU-Pro data in {args.data} (items.csv.gz, responses.csv.gz)")
    start = time.perf_counter()
    figures = build(args.data, args.out, args.seed, args.folds)
    seconds = time.perf_counter() - start
    size = folder_size(args.out)
    print(f"built {args.out} in {seconds / 60:.1f} min; {size / 2**20:.1f} MiB")
    for design, per in figures["design_errors"].items():
        print(f"  {design}: " + ", ".join(f"MAE {v:.4f} at {n}" for n, v in per.items()))
    print("  --design auto runs " + ", ".join(f"{d} at {n}" for n, d in figures["auto"].items()))


if __name__ == "__main__":
    main()
