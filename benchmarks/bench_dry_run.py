"""How close ``--dry-run``'s estimate comes to what a run then spends.

    python benchmarks/bench_dry_run.py            # 4 replayed models, 250 items each
    python benchmarks/bench_dry_run.py --quick    # 2 models, 100 items

On ``mmlu-pro`` under its official protocol (5-shot chain of thought): the local test
server replays reference models' recorded answers over the OpenAI API; for each model
the estimate ``cat assess --dry-run`` prints (``cat.assessment.cost_estimate``) is set
beside the tokens the run then spends, as the server counts them (four characters a
token, as the estimate: a real endpoint's tokenizer differs, and a real model's replies
are its own length, where the server's are short made-up ones). The issue's target:
within 25% of the tokens spent. Then the same for ``cat synth`` on the README's 60-item
benchmark (three simulated models, alone and in pairs), whose reply length is taken
from a first run's store, as a rerun's dry run takes it.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from cat.assessment.assess import assess
from cat.assessment.cost_estimate import estimate_assessment
from cat.assessment.endpoint import EndpointExaminee
from cat.pools.importer import import_questions
from itempool import load_pool, read_questions
from synth.estimate import estimate_synthesis
from synth.job import prepare_run, run_synthesis
from synth.local_server import LocalServer
from synth.local_server.replay import read_replay
from synth.local_server.simulator import random_item_params
from synth.names import GENERATION_STAGE
from synth.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
MODELS = ["Meta-Llama-3_1-70B-Instruct", "Qwen1.5-72B-Chat", "gemma-7b", "Mixtral-8x7B-v0.1"]


def _assessments(models: list[str], length: int, folder: Path) -> None:
    pool = load_pool("mmlu-pro")
    replay = read_replay(ROOT / "item_pools/mmlu-pro/reference_answers.csv.gz", models)
    print(f"cat assess on mmlu-pro, official protocol, {length} items a model")
    print(f"{'model':30} {'estimated':>10} {'spent':>10} {'in (est/spent)':>16} {'error':>7}")
    with LocalServer(pool.items, {}, replay=replay) as server:
        for model in models:
            examinee = EndpointExaminee(model, base_url=server.base_url, store=folder / "a.db")
            estimate = estimate_assessment(pool, examinee, length=length)
            result = assess(pool, examinee, length=length)
            assert estimate.tokens is not None and result.usage is not None
            spent = result.usage.prompt_tokens + result.usage.completion_tokens
            error = estimate.tokens / spent - 1
            ins = f"{estimate.prompt_tokens:,}/{result.usage.prompt_tokens:,}"
            print(f"{model:30} {estimate.tokens:>10,} {spent:>10,} {ins:>16} {error:>+7.1%}")


def _synthesis(folder: Path) -> None:
    source = ROOT / "examples/ward_questions.csv"
    import_questions(source, {}, folder / "ward", "ward", "en")
    items = list(read_questions(folder / "ward").items)
    thetas = {"strong": 1.5, "medium": 0.5, "weak": -0.5}
    with LocalServer(items, thetas, irt=random_item_params(items, 0)) as server:
        store, url = folder / "s.db", server.base_url
        first = run_synthesis(
            folder / "ward", "strong,medium", out=folder / "1.jsonl", store=store, base_url=url
        )
        with RunStore(store) as run_store:
            reply = run_store.mean_completion_tokens(["strong", "medium"], GENERATION_STAGE)
        # The rerun with a third model: what the dry run says it adds, then what it adds.
        three, out = "strong,medium,weak", folder / "2.jsonl"
        plan = prepare_run(folder / "ward", three, out=out, store=store, base_url=url)
        with RunStore(store) as run_store:
            estimate = estimate_synthesis(plan, run_store, reply, "the store")
        before = first.store_totals
        second = run_synthesis(folder / "ward", three, out=out, store=store, base_url=url)
        after = second.store_totals
    est = sum(m.prompt_tokens + (m.completion_tokens or 0) for m in estimate.models)
    spent = (after.prompt_tokens + after.completion_tokens) - (
        before.prompt_tokens + before.completion_tokens
    )
    print(
        f"\ncat synth, a third model added to two (60 items, alone and in pairs): "
        f"{estimate.calls:,} calls estimated, {second.new_calls:,} made; tokens "
        f"{est:,} estimated, {spent:,} spent ({est / spent - 1:+.1%})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 models, 100 items")
    args = parser.parse_args()
    models, length = (MODELS[:2], 100) if args.quick else (MODELS, 250)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        _assessments(models, length, Path(tmp))
        _synthesis(Path(tmp))
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
