"""MMLU-Pro's official protocol for the shipped pool: how its references were asked and graded.

    python item_pools/mmlu_pro_protocol.py VALIDATION [--pool item_pools/mmlu-pro]

VALIDATION is MMLU-Pro's validation split (70 worked examples, five per category, with
their chain-of-thought answers ``cot_content``) as JSON (a list of rows) or Parquet, as
the Hugging Face dataset TIGER-Lab/MMLU-Pro holds it (MIT). The script writes the
protocol's files into the pool (``protocol/examples.jsonl``, ``protocol/chat.jinja``) and
its entry into ``pool.json`` (``protocol``, and the split among the ``sources``), leaving
the calibration as it is; ``build_mmlu_pro.py`` keeps them when it rebuilds the pool.

The protocol is that of ``evaluate_from_api.py`` in TIGER-AI-Lab/MMLU-Pro (commit
``OFFICIAL_COMMIT``), the chat form: one user message, no system message, opening with
the official instruction for the question's category, then the category's first five
validation examples (``N/A`` options dropped, as the official ``preprocess`` does; the
leading "A: " of the worked answer dropped, as its ``format_example`` does), then the
question, ending "Answer: Let's think step by step."; temperature 0, at most 4,000 new
tokens; the letter read by the official three rules (``synth.extractors``), a reply with
none counted wrong, as the references' accuracies count it. The message is sent without
the official prompt's two closing newlines (a rendered template is stripped).

Open-weight references were run through ``evaluate_from_local.py`` instead: the raw
form (``forms.raw``, ``protocol/raw.jinja``), the same examples in one prompt for a
completions endpoint without a chat template (instruction
``cot_prompt_lib/initial_prompt.txt``, ``format_cot_example``'s layout: "Question:" and
"Options:" on lines of their own, each worked answer opening "Answer: Let's think step
by step."), stop at "Question:", 2,048 new tokens; 20 of those 25 references' stored
letters were read by the first two rules only (the third was added on 2024-07-09, after
their runs), so the raw form grades by those two (``mmlu-pro-official-2rule``). The
local script scores a reply with no letter as a seeded guess in the accuracy it prints,
but stores no letter, and the pool's references count it wrong. It also drops worked
examples while the prompt is longer than 2,048 tokens of the model's tokenizer, which an
endpoint cannot know: the raw form always shows five. ``references`` lists which
reference was asked in which form, as the official outputs tell.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
POOL = HERE / "mmlu-pro"
LETTERS = "ABCDEFGHIJKLMNOP"
OFFICIAL_REPO = "https://github.com/TIGER-AI-Lab/MMLU-Pro"
OFFICIAL_COMMIT = "f418b116db00b065c2aea046518d8fcf74d39872"
EXAMPLES = "protocol/examples.jsonl"
TEMPLATE = "protocol/chat.jinja"
RAW_TEMPLATE = "protocol/raw.jinja"

#: The user message of ``evaluate_from_api.py``: the instruction, the examples as its
#: ``format_example`` writes them, the question ending "Answer: Let's think step by step."
CHAT_TEMPLATE = (
    "The following are multiple choice questions (with answers) about {{ scenario }}. "
    'Think step by step and then output the answer in the format of "The answer is (X)" '
    "at the end.\n\n"
    "{% for e in examples %}Question: {{ e.question }}\n"
    "Options: {% for letter, text in e.choices %}{{ letter }}. {{ text }}\n{% endfor %}"
    "Answer: {{ e.worked }}\n\n{% endfor %}"
    "Question: {{ question }}\n"
    "Options: {% for letter, text in choices %}{{ letter }}. {{ text }}\n{% endfor %}"
    "Answer: Let's think step by step.\n"
)

#: The prompt of ``evaluate_from_local.py``'s ``generate_cot_prompt``: the instruction file
#: (three newlines at its end) and one more newline, the examples as
#: ``format_cot_example`` writes them (the worked answer's "A: Let's think step by step."
#: made "Answer: Let's think step by step."), the question ending "Answer: Let's think
#: step by step.".
RAW_TEMPLATE_TEXT = (
    "The following are multiple choice questions (with answers) about {{ scenario }}. "
    'Think step by step and then finish your answer with "the answer is (X)" where X is '
    "the correct letter choice.\n\n\n\n"
    "{% for e in examples %}Question:\n{{ e.question }}\nOptions:\n"
    "{% for letter, text in e.choices %}{{ letter }}. {{ text }}\n{% endfor %}"
    "Answer: {{ e.worked }}\n\n{% endfor %}"
    "Question:\n{{ question }}\nOptions:\n"
    "{% for letter, text in choices %}{{ letter }}. {{ text }}\n{% endfor %}"
    "Answer: Let's think step by step.\n"
)

#: The references asked in the chat form (their outputs hold ``model_outputs``, as
#: ``evaluate_from_api.py`` writes them) and in the raw form (``generated_text``, from
#: ``evaluate_from_local.py``); the outputs of repo_deepseek, repo_gpt4o and repo_merged
#: are not in the official repository.
CHAT_REFERENCES = (
    "DeepSeek-Coder-V2",
    "gemini-1.5-flash-002",
    "gemini-1.5-pro-002",
    "jamba-1.5-large",
)
RAW_REFERENCES = (
    "Llama-2-13b-hf",
    "Llama-2-70b-hf",
    "Llama-2-7b-hf",
    "Meta-Llama-3-70B",
    "Meta-Llama-3-8B",
    "Meta-Llama-3_1-70B-Instruct",
    "Meta-Llama-3_1-70B",
    "Meta-Llama-3_1-8B-Instruct",
    "Meta-Llama-3_1-8B",
    "Mistral-7B-Instruct-v0.1",
    "Mistral-7B-Instruct-v0.2",
    "Mistral-7B-v0.1",
    "Mistral-7B-v0.2-hf",
    "Mixtral-8x7B-Instruct-v0.1",
    "Mixtral-8x7B-v0.1",
    "Phi-3-mini-4k-instruct",
    "Qwen1.5-110B",
    "Qwen1.5-72B-Chat",
    "Qwen1.5-7B-Chat",
    "Yi-34B",
    "Yi-6B",
    "Yi-6b-Chat",
    "c4ai-command-r-v01",
    "gemma-7b",
    "mathstral-7B",
)

CHAT_NOTE = (
    "The chat form of evaluate_from_api.py. The references were asked in two forms, "
    "as the official outputs tell (references: this form's; forms.raw.references: the "
    "raw form's); repo_deepseek, repo_gpt4o and repo_merged left no outputs in the "
    "repository. A reply with no letter counts as wrong in every reference's accuracy."
)
RAW_NOTE = (
    "The raw prompt of evaluate_from_local.py for a completions endpoint (no chat "
    "template). Its references' letters were read by the first two official rules "
    "(the Llama-3.1 runs and mathstral-7B by all three, as the pool's main form reads "
    "them); the official script also drops worked examples from a prompt longer than "
    "2,048 tokens of the model's tokenizer, which this form does not."
)

SOURCE = {
    "what": "the 70 worked examples of the official 5-shot prompt (the validation split, "
    "cot_content)",
    "url": "https://huggingface.co/datasets/TIGER-Lab/MMLU-Pro",
    "license": "MIT",
}


def protocol_entry() -> dict[str, Any]:
    """``pool.json``'s ``protocol``: the chat form, and the raw form among its forms."""
    local = f"{OFFICIAL_REPO}/blob/{OFFICIAL_COMMIT}/evaluate_from_local.py"
    return {
        "name": "mmlu-pro-official",
        "form": "chat",
        "mode": "generate",
        "endpoint": "chat",
        "style": "cot",
        "system_prompt": "",
        "template": TEMPLATE,
        "few_shot": 5,
        "examples": EXAMPLES,
        "few_shot_select": "first",
        "extractor": "mmlu-pro-official",
        "temperature": 0.0,
        "max_tokens": 4000,
        "stop": None,
        "no_answer": "wrong",
        "source": f"{OFFICIAL_REPO}/blob/{OFFICIAL_COMMIT}/evaluate_from_api.py",
        "note": CHAT_NOTE,
        "references": list(CHAT_REFERENCES),
        # The mean length of the official replies in tests/synth/data (synth.token_estimate
        # of each): 48 of this form, 300 of the raw one; a sample, half of it replies the
        # official rules and the built-in reader read differently. What --dry-run expects.
        "reply_tokens": 127,
        "forms": {
            "raw": {
                "endpoint": "completions",
                "template": RAW_TEMPLATE,
                "extractor": "mmlu-pro-official-2rule",
                "max_tokens": 2048,
                "stop": ["Question:"],
                "source": local,
                "note": RAW_NOTE,
                "references": list(RAW_REFERENCES),
                "reply_tokens": 176,
            }
        },
    }


def read_validation(path: Path) -> list[dict[str, Any]]:
    """The validation split's rows, from JSON or Parquet."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq  # only to read the split as Hugging Face exports it

        rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
        return rows
    loaded = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(loaded, list):
        raise SystemExit(f"{path}: expected a JSON list of the split's rows")
    return loaded


def worked_examples(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The split's rows as worked examples (``itempool.worked_examples``), in its order:
    N/A options dropped and the rest lettered anew, the answer's letter with them, the
    worked answer without its leading "A: "."""
    examples = []
    for row in rows:
        options = list(row["options"])
        kept = [k for k, text in enumerate(options) if text != "N/A"]
        index = int(row["answer_index"])
        if index not in kept:
            raise SystemExit(f"validation row {row['question_id']}: its answer is an N/A option")
        worked = str(row["cot_content"])
        examples.append(
            {
                "id": f"val-{row['question_id']}",
                "scenario": row["category"],
                "question": row["question"],
                "options": {LETTERS[j]: options[k] for j, k in enumerate(kept)},
                "answer": LETTERS[kept.index(index)],
                "worked": worked[3:] if worked.startswith("A: ") else worked,
            }
        )
    return examples


def write_protocol(pool: Path, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Write the protocol's files into ``pool``; its ``pool.json`` entry."""
    from itempool import WorkedExample

    examples = worked_examples(rows)
    for example in examples:
        WorkedExample.model_validate(example)  # a bad row stops here
    (pool / "protocol").mkdir(exist_ok=True)
    text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in examples)
    (pool / EXAMPLES).write_text(text, encoding="utf-8")
    (pool / TEMPLATE).write_text(CHAT_TEMPLATE, encoding="utf-8")
    (pool / RAW_TEMPLATE).write_text(RAW_TEMPLATE_TEXT, encoding="utf-8")
    return protocol_entry()


def with_protocol(manifest: dict[str, Any]) -> dict[str, Any]:
    """``manifest`` (pool.json) with the protocol entry and its source."""
    sources = [s for s in manifest.get("sources", []) if s.get("what") != SOURCE["what"]]
    return {**manifest, "sources": [*sources, SOURCE], "protocol": protocol_entry()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("validation", type=Path, help="the validation split (JSON or Parquet)")
    parser.add_argument("--pool", type=Path, default=POOL, help="the pool folder")
    args = parser.parse_args(argv)
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    rows = read_validation(args.validation)
    write_protocol(args.pool, rows)
    path = args.pool / "pool.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    updated = with_protocol(manifest)
    path.write_text(json.dumps(updated, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(rows)} worked examples and the official templates written into {args.pool}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
