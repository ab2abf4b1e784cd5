"""The MMLU-Pro pool's grading against the official grading, on the references' own replies.

    python benchmarks/bench_mmlu_pro_grading.py RESULTS [--models A,B] [--out FILE.json]
    python benchmarks/bench_mmlu_pro_grading.py RESULTS --replay Qwen1.5-72B-Chat
    python benchmarks/bench_mmlu_pro_grading.py RESULTS --write-fixture FILE.jsonl.gz

RESULTS is a folder of the official outputs of TIGER-AI-Lab/MMLU-Pro (``eval_results/``:
``model_outputs_*.zip`` or the ``.json`` files inside them; Apache-2.0), one file per
model, each row a question with the raw reply (``model_outputs`` from
``evaluate_from_api.py``, ``generated_text`` from ``evaluate_from_local.py``) and the
letter the official rules stored (``pred``).

**Agreement** (the default). For every model: how many stored letters follow from the
reply by the official rules at all (the three rules of today, or the first two, which
produced the stored letters of the open-weight runs of July 2024; a letter that neither
derives, such as the "G" some files store for every reply without a letter, is left out
of the agreement and counted); how often the pool's extractor (``mmlu-pro-official``)
and the rule set that reproduces the model's letters best read the same letter; how
often the project's built-in reader (``builtin``, what ``cat synth`` grades with) does;
and each one's accuracy against the official (stored ``pred`` equal to the key: the
accuracy the pool's reference data hold). Then every class of disagreement, with counts.

**Replay** (``--replay MODEL``): the pool built without MODEL (as
``bench_mmlu_pro_pool.py`` builds it), then ``cat.assess`` of MODEL through an
``EndpointExaminee`` whose endpoint is a local server replaying MODEL's official replies
word for word, under the pool's protocol; prints whether each asked item was graded as
the official result grades it and whether the official accuracy lies inside the 90%
interval. About 6 minutes a model (the calibration and its cross-fit).

``--write-fixture`` writes the sample of replies the test suite replays
(``tests/synth/data/``): a few hundred, from every class of disagreement and model.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))
if str(REPO / "benchmarks") not in sys.path:
    sys.path.insert(0, str(REPO / "benchmarks"))

from itempool import ItemType  # noqa: E402
from synth.extractors import extract_with, mmlu_pro_official  # noqa: E402

LETTERS = "ABCDEFGHIJ"
_ANSWER_IS = re.compile(r"answer is \(?([A-J])\)?")


def model_files(folder: Path) -> dict[str, Path]:
    """Each model's file of outputs in ``folder`` (a zip preferred to nothing, the JSON
    to its zip), by the model's name as the file names it."""
    found: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        name = path.name
        if not name.startswith("model_outputs_"):
            continue
        stem = name.removeprefix("model_outputs_").removesuffix(".zip").removesuffix(".json")
        stem = re.sub(r"_\d+-?shots.*$", "", stem)
        if path.suffix == ".json" or stem not in found:
            found[stem] = path
    return found


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of one model's outputs (a JSON list; a zip holding one)."""
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            inner = [n for n in archive.namelist() if n.endswith(".json")]
            data = json.loads(archive.read(inner[0]))
    else:
        data = json.loads(path.read_text(encoding="utf-8"))
    # Some files end in a few category totals: only question rows count.
    return [row for row in data if isinstance(row, dict) and "question_id" in row]


def reply_of(row: dict[str, Any]) -> str:
    text = row.get("model_outputs", row.get("generated_text"))
    return text if isinstance(text, str) else ""


def options_of(row: dict[str, Any]) -> dict[str, str]:
    options = [o for o in row["options"] if o != "N/A"]
    return {LETTERS[k]: str(text) for k, text in enumerate(options[: len(LETTERS)])}


def readings(text: str, options: dict[str, str]) -> dict[str, str | None]:
    """The letter each rule set reads from ``text``."""
    return {
        "rules3": mmlu_pro_official(text, strip_bold=False),
        "rules3_bold": mmlu_pro_official(text),
        "rules2": mmlu_pro_official(text, rules=2, strip_bold=False),
        "builtin": extract_with("builtin", text, ItemType.SINGLE, options),
    }


def disagreement(text: str, stored: str | None, read: dict[str, str | None], key: str) -> str:
    """Why the built-in reader reads another letter than the official one stored."""
    mine = read[key]
    if mine is None:
        return "the built-in reader finds no answer (a hedge, or a form it does not read)"
    if stored is None:
        return "the built-in reader finds an answer where the official rules found none"
    if len(_ANSWER_IS.findall(text)) > 1:
        return "several 'answer is' statements: the official rules take the first"
    after = text[text.rfind("answer is") :] if "answer is" in text else ""
    if after and re.search(r"\b[A-J]\b", after[15:]):
        return "letters after the last 'answer is' (a summary, another question)"
    return "other forms (an option's text, 'Answer: X' placement, the last letter)"


def agreement(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of one model (module docstring)."""
    n = len(rows)
    counts: Counter[str] = Counter()
    classes: Counter[str] = Counter()
    right: Counter[str] = Counter()
    examples: list[dict[str, Any]] = []
    for row in rows:
        text, stored, key = reply_of(row), row.get("pred") or None, row["answer"]
        read = readings(text, options_of(row))
        right["official"] += stored == key
        for rule, letter in read.items():
            right[rule] += letter == key
        derivable = stored in (read["rules3"], read["rules3_bold"], read["rules2"])
        counts["derivable"] += derivable
        if not derivable:
            counts["underivable"] += 1
            classes[f"stored letter {stored!r} follows from no rule"] += 1
            continue
        for rule in ("rules3_bold", "rules3", "rules2", "builtin"):
            counts[f"same_{rule}"] += read[rule] == stored
        if read["builtin"] != stored:
            classes[disagreement(text, stored, read, "builtin")] += 1
        if read["rules3_bold"] != stored:
            examples.append({"model": name, "row": row, "read": read})
    matched = "rules3" if counts["same_rules3"] >= counts["same_rules2"] else "rules2"
    derivable = max(counts["derivable"], 1)
    return {
        "model": name,
        "replies": n,
        "form": "chat (api)" if "model_outputs" in rows[0] else "raw (local)",
        "underivable": counts["underivable"],
        "pool_extractor": counts["same_rules3_bold"] / derivable,
        "matched_rules": matched,
        "matched": counts[f"same_{matched}"] / derivable,
        "builtin": counts["same_builtin"] / derivable,
        "accuracy_official": right["official"] / n,
        "accuracy_pool_extractor": right["rules3_bold"] / n,
        "accuracy_matched": right[matched] / n,
        "accuracy_builtin": right["builtin"] / n,
        "classes": dict(classes.most_common()),
    }


def print_agreement(results: list[dict[str, Any]]) -> None:
    print(
        f"{'model':<30}{'form':<12}{'replies':>8}{'no rule':>8}{'pool':>8}{'rules':>7}"
        f"{'matched':>9}{'builtin':>9}   accuracy official / pool / matched / builtin"
    )
    for r in results:
        print(
            f"{r['model']:<30}{r['form']:<12}{r['replies']:>8}{r['underivable']:>8}"
            f"{r['pool_extractor']:>8.4f}{r['matched_rules']:>7}{r['matched']:>9.4f}"
            f"{r['builtin']:>9.4f}   {r['accuracy_official']:.4f} / "
            f"{r['accuracy_pool_extractor']:.4f} / {r['accuracy_matched']:.4f} / "
            f"{r['accuracy_builtin']:.4f}"
        )
    total = sum(r["replies"] for r in results)
    under = sum(r["underivable"] for r in results)
    print(
        f"\n{len(results)} models, {total:,} replies; {under:,} stored letters follow from no rule"
    )
    worst = max(abs(r["accuracy_matched"] - r["accuracy_official"]) for r in results)
    worst_pool = max(abs(r["accuracy_pool_extractor"] - r["accuracy_official"]) for r in results)
    worst_builtin = max(abs(r["accuracy_builtin"] - r["accuracy_official"]) for r in results)
    print(
        f"largest accuracy gap to the official, in points: matched rules {100 * worst:.2f}, "
        f"the pool's extractor {100 * worst_pool:.2f}, built-in reader {100 * worst_builtin:.2f}"
    )
    print("\nclasses of disagreement (built-in reader vs the stored letter; no-rule letters):")
    classes: Counter[str] = Counter()
    for r in results:
        classes.update(r["classes"])
    for what, count in classes.most_common():
        print(f"  {count:>7,}  {what}")


def sample_fixture(folder: Path, seed: int, per_model: int) -> Iterator[dict[str, Any]]:
    """A few replies of each model: where the pool's extractor and the built-in reader
    disagree with each other first, the rest drawn; with what each rule read."""
    rng = random.Random(seed)
    for name, path in model_files(folder).items():
        # Short replies of a shuffled few hundred rows: enough disputes, a small file.
        rows = [row for row in read_rows(path) if len(reply_of(row)) <= 6000]
        rng.shuffle(rows)
        disputed = []
        for row in rows[:800]:
            read = readings(reply_of(row), options_of(row))
            if read["builtin"] != read["rules3_bold"] or read["rules2"] != read["rules3"]:
                disputed.append(row)
        picked = disputed[: per_model // 2]
        chosen = {id(row) for row in picked}
        picked += [row for row in rows if id(row) not in chosen][: per_model - len(picked)]
        for row in picked:
            text = reply_of(row)
            yield {
                "model": name,
                "question_id": str(row["question_id"]),
                "answer": row["answer"],
                "pred": row.get("pred") or None,
                "form": "api" if "model_outputs" in row else "local",
                "reply": text,
            }


def replay(model: str, folder: Path, folds: int, length: int, seed: int) -> dict[str, Any]:
    """Assess ``model`` by its official replies on the pool built without it."""
    from bench_mmlu_pro_pool import build_without

    import cat
    from synth.local_server import LocalServer

    files = model_files(folder)
    if model not in files:
        raise SystemExit(f"no outputs of {model} in {folder} (there are: {', '.join(files)})")
    rows = {str(r["question_id"]): r for r in read_rows(files[model])}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-mmlu-pro-grading-") as tmp:
        pool_dir, truth, _ = build_without(model, Path(tmp), folds)
        pool = cat.load_pool(pool_dir)
        replies = {model: {item: reply_of(row) for item, row in rows.items()}}
        with LocalServer(pool.items, {}, replies=replies) as server:
            examinee = cat.EndpointExaminee(
                model, base_url=server.base_url, store=Path(tmp) / "calls.db"
            )
            result = cat.assess(pool, examinee, length=length, seed=seed)
    asked = [item for item in result.items if item.id in rows]
    official = {
        item.id: int(rows[item.id].get("pred") == rows[item.id]["answer"]) for item in asked
    }
    same = sum(int(item.response == official[item.id]) for item in asked)
    # Each item graded otherwise: the stored letter, the one read, and whether the
    # stored letter follows from the reply by today's rules at all.
    differing = [
        {
            "item": item.id,
            "stored": rows[item.id].get("pred"),
            "read": item.answer,
            "rules_read": mmlu_pro_official(reply_of(rows[item.id])),
        }
        for item in asked
        if item.response != official[item.id]
    ]
    acc = result.predicted_accuracy
    return {
        "model": model,
        "asked": len(result.items),
        "graded_as_official": same,
        "graded_otherwise": differing,
        "truth": truth,
        "predicted": acc.value,
        "low": acc.low,
        "high": acc.high,
        "inside": bool(acc.low <= truth <= acc.high),
        "protocol_followed": result.settings.protocol.followed
        if result.settings.protocol
        else None,
        "seconds": round(time.perf_counter() - start, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="folder of the official eval_results")
    parser.add_argument("--models", default=None, help="a,b,...: these models only")
    parser.add_argument("--out", type=Path, default=None, help="write the figures here (JSON)")
    parser.add_argument("--replay", default=None, help="MODEL: replay its replies (see above)")
    parser.add_argument("--folds", type=int, default=5, help="cross-fit folds for --replay")
    parser.add_argument("--length", type=int, default=250, help="test length for --replay")
    parser.add_argument("--seed", type=int, default=0, help="seed of the assessment / sample")
    parser.add_argument("--write-fixture", type=Path, default=None, help="FILE.jsonl.gz")
    parser.add_argument("--per-model", type=int, default=12, help="fixture replies per model")
    args = parser.parse_args()
    if not args.results.is_dir():
        raise SystemExit(f"{args.results}: no such folder")
    if args.write_fixture is not None:
        lines = sample_fixture(args.results, args.seed, args.per_model)
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        with gzip.open(args.write_fixture, "wt", encoding="utf-8") as fh:
            fh.write(text)
        print(f"{text.count(chr(10))} replies written to {args.write_fixture}")
        return
    if args.replay is not None:
        row = replay(args.replay, args.results, args.folds, args.length, args.seed)
        print(json.dumps(row, indent=1))
        if args.out is not None:
            args.out.write_text(json.dumps(row, indent=1) + "\n", encoding="utf-8")
        return
    files = model_files(args.results)
    wanted = None if args.models is None else {m.strip() for m in args.models.split(",")}
    results = []
    for name, path in files.items():
        if wanted is not None and name not in wanted:
            continue
        started = time.perf_counter()
        results.append(agreement(name, read_rows(path)))
        print(f"  {name}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    print_agreement(results)
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
