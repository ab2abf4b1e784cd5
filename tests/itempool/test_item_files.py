"""A pool's questions gzipped (``items.jsonl.gz``): read by every reader, kept by every
writer that rewrites them, refused beside a plain ``items.jsonl``."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cat.errors import CatError
from cat.pools.calibration import record_calibration
from cat.pools.check import validate_pool
from cat.pools.importer import import_questions
from cat.pools.recalibration_job import recalibrate_pool
from irt.simulate import simulate_responses
from itempool import ITEMS, ITEMS_GZ, PoolFormatError, check_pool, items_file, load_pool
from itempool.formats.responses import write_jsonl
from itempool.item_files import read_text, write_text
from tests.itempool.test_format import item, write_clean_pool


def _gzip_items(folder: Path) -> Path:
    """``folder``'s items.jsonl replaced by items.jsonl.gz holding the same lines."""
    plain = folder / ITEMS
    write_text(folder / ITEMS_GZ, plain.read_text(encoding="utf-8"))
    plain.unlink()
    return folder


def test_a_gzipped_pool_loads_as_the_plain_one(tmp_path: Path) -> None:
    plain = load_pool(write_clean_pool(tmp_path / "plain"))
    packed = load_pool(_gzip_items(write_clean_pool(tmp_path / "packed")))
    assert packed.items == plain.items
    assert packed.params is not None and plain.params is not None
    assert packed.params.item_ids == plain.params.item_ids
    assert np.array_equal(packed.params.b, plain.params.b)
    assert packed.references == plain.references
    assert items_file(tmp_path / "packed") == tmp_path / "packed" / ITEMS_GZ
    assert items_file(tmp_path / "plain") == tmp_path / "plain" / ITEMS


def test_writing_gzip_is_reproducible(tmp_path: Path) -> None:
    # No time stamp in the header: a rebuilt pool's file is the same bytes.
    write_text(tmp_path / "a.jsonl.gz", "é\n")
    first = (tmp_path / "a.jsonl.gz").read_bytes()
    write_text(tmp_path / "a.jsonl.gz", "é\n")
    assert (tmp_path / "a.jsonl.gz").read_bytes() == first
    assert gzip.decompress(first) == "é\n".encode()
    assert read_text(tmp_path / "a.jsonl.gz") == "é\n"


def test_problems_name_the_gzipped_file_and_line(tmp_path: Path) -> None:
    pool = _gzip_items(write_clean_pool(tmp_path / "p"))
    lines = read_text(pool / ITEMS_GZ).splitlines()
    lines[1] = "{nope"
    write_text(pool / ITEMS_GZ, "\n".join(lines) + "\n")
    problems = [str(p) for p in check_pool(pool)]
    assert problems[0].startswith("items.jsonl.gz:2: not valid JSON")
    # params.csv's row for the item that no longer reads names the gzipped file too.
    assert any("items.jsonl.gz" in p for p in problems[1:])


def test_a_damaged_gzip_file_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    pool = _gzip_items(write_clean_pool(tmp_path / "p"))
    data = (pool / ITEMS_GZ).read_bytes()
    (pool / ITEMS_GZ).write_bytes(data[: len(data) // 2])
    problems = check_pool(pool)
    assert problems[0].file == ITEMS_GZ and "cannot read it" in problems[0].message
    with pytest.raises(PoolFormatError, match=r"items\.jsonl\.gz: cannot read it"):
        load_pool(pool)


def test_both_files_are_refused_naming_them(tmp_path: Path) -> None:
    pool = write_clean_pool(tmp_path / "p")
    write_text(pool / ITEMS_GZ, (pool / ITEMS).read_text(encoding="utf-8"))
    problems = check_pool(pool)
    assert [str(p) for p in problems] == [
        "items.jsonl, items.jsonl.gz: both items.jsonl and items.jsonl.gz are here: a pool "
        "keeps its questions in one of them; remove the other"
    ]
    with pytest.raises(PoolFormatError, match=r"1 problem; the first: items\.jsonl, items"):
        load_pool(pool)
    with pytest.raises(PoolFormatError, match=r"both items\.jsonl and items\.jsonl\.gz"):
        items_file(pool)
    check = validate_pool(pool)
    assert not check.ok and check.errors == 1


def test_calibration_into_a_gzipped_pool_checks_its_item_ids(tmp_path: Path) -> None:
    pool = _gzip_items(write_clean_pool(tmp_path / "p"))
    params = load_pool(pool).params
    assert params is not None
    record_calibration(pool, params, [], {"method": "test"})  # the same ids: accepted
    stranger = replace(params, item_ids=("q1", "q2", "q3", "q4", "zz"))
    with pytest.raises(CatError, match=r"1 calibrated item\(s\) are not in .*items\.jsonl\.gz"):
        record_calibration(pool, stranger, [], {"method": "test"})


def test_recalibration_keeps_the_gzipped_form(tmp_path: Path) -> None:
    pool = _gzip_items(write_clean_pool(tmp_path / "p"))
    params = load_pool(pool).params
    assert params is not None
    rng = np.random.default_rng(3)
    responses = simulate_responses(params, rng.normal(size=200), rng)
    responses = replace(responses, subject_ids=tuple(f"s{k:03d}" for k in range(200)))
    write_jsonl(responses, tmp_path / "new.jsonl")
    out = tmp_path / "v3"
    recalibrate_pool([tmp_path / "new.jsonl"], pool, out)
    assert (out / ITEMS_GZ).is_file() and not (out / ITEMS).exists()
    assert [i.id for i in load_pool(out).items] == ["q1", "q2", "q3", "q4", "q5"]


def test_the_importer_does_not_write_over_a_gzipped_pool(tmp_path: Path) -> None:
    pool = _gzip_items(write_clean_pool(tmp_path / "p", calibrated=False))
    (pool / "pool.json").unlink()
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps(item("n1")) + "\n")
    mapping = {"id": "id", "question": "question", "answer": "answer", "options": "options"}
    with pytest.raises(CatError, match=r"already holds items\.jsonl\.gz"):
        import_questions(questions, mapping, pool, "n", "en")


def test_a_question_holding_unicode_line_breaks_stays_one_item(tmp_path: Path) -> None:
    # JSON strings may hold U+0085 and U+2028 unescaped (MMLU-Pro has one); JSONL lines
    # end at \n only, so they must not split an item (str.splitlines would).
    pool = write_clean_pool(tmp_path / "p", calibrated=False)
    record = item("q6", question="Costs\x85 and\u2028 prices\u2029?")
    text = (pool / ITEMS).read_text(encoding="utf-8")
    write_text(pool / ITEMS_GZ, text + json.dumps(record, ensure_ascii=False) + "\r\n")
    (pool / ITEMS).unlink()
    items = load_pool(pool).items
    assert [i.id for i in items][-1] == "q6" and items[-1].question == record["question"]
