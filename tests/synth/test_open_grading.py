"""Grading open-ended replies against reference answers and numeric keys (issue 15).

The cases in ``data/open_grading_cases.jsonl`` carry expected scores worked out by hand
(the note of each says how), not outputs of the code.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from synth.errors import SynthError
from synth.grading import GradeStatus
from synth.numeric_answer import ReplyNumber, check_tolerances, extract_number, numeric_match
from synth.open_grading import OpenGrade, OpenMetric, grade_open
from synth.text_metrics import (
    best_text_score,
    detect_language,
    lcs_length,
    normalize_text,
    rouge_l,
    token_f1,
    tokenize,
)

CASES_PATH = Path(__file__).parent / "data" / "open_grading_cases.jsonl"
CASES: list[dict[str, Any]] = [
    json.loads(line) for line in CASES_PATH.read_text(encoding="utf-8").splitlines() if line
]


def test_the_case_file_is_large_unique_and_bilingual() -> None:
    assert len(CASES) >= 100
    ids = [case["id"] for case in CASES]
    assert len(set(ids)) == len(ids)
    languages = {detect_language(" ".join(case["references"]) or case["reply"]) for case in CASES}
    assert languages == {"zh", "en"}
    for case in CASES:
        assert {"id", "reply", "references", "numeric_key", "expected_score", "note"} <= set(case)
        assert 0.0 <= case["expected_score"] <= 1.0
        assert case["note"]


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case(case: dict[str, Any]) -> None:
    options = {k: case[k] for k in ("abs_tol", "rel_tol", "metric", "language") if k in case}
    result = grade_open(
        case["reply"], case["references"], numeric_key=case["numeric_key"], **options
    )
    assert result.score == pytest.approx(case["expected_score"], abs=case.get("tolerance", 1e-6))
    assert 0.0 <= result.score <= 1.0


# ---- longest common subsequence ---------------------------------------------------------


def _brute_force_lcs(a: str, b: str) -> int:
    """The longest subsequence of ``a`` that is also one of ``b``, by trying them all."""
    for size in range(min(len(a), len(b)), 0, -1):
        for picked in itertools.combinations(a, size):
            rest = iter(b)
            if all(char in rest for char in picked):
                return size
    return 0


def test_lcs_matches_brute_force_on_random_short_strings() -> None:
    rng = random.Random(20240615)
    for _ in range(600):
        alphabet = "ab" if rng.random() < 0.3 else "abcde"
        a = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        b = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        assert lcs_length(a, b) == _brute_force_lcs(a, b), (a, b)
        assert lcs_length(b, a) == lcs_length(a, b)


def test_lcs_matches_dynamic_programming_on_longer_token_lists() -> None:
    rng = random.Random(7)
    for _ in range(50):
        a = [rng.choice(["心", "衰", "mg", "45", "the"]) for _ in range(rng.randint(0, 120))]
        b = [rng.choice(["心", "衰", "mg", "45", "of"]) for _ in range(rng.randint(0, 90))]
        table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                table[i + 1][j + 1] = (
                    table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
                )
        assert lcs_length(a, b) == table[-1][-1]


def test_lcs_of_known_sequences() -> None:
    assert lcs_length("ABCBDAB", "BDCABA") == 4  # BCBA (Cormen et al.'s example)
    assert lcs_length("", "abc") == 0
    assert lcs_length("abc", "abc") == 3


def test_rouge_l_and_f1_on_token_lists() -> None:
    # LCS 4 of 6 and 5 tokens: P = 4/6, R = 4/5, F = 8/11
    reply = ["the", "patient", "needs", "urgent", "dialysis", "today"]
    ref = ["patient", "needs", "urgent", "renal", "dialysis"]
    assert rouge_l(reply, ref) == pytest.approx(8 / 11)
    assert token_f1(reply, ref) == pytest.approx(8 / 11)
    assert rouge_l([], ref) == 0.0 and token_f1(reply, []) == 0.0
    assert token_f1(["a", "a", "b"], ["a", "b", "b"]) == pytest.approx(4 / 6)


def test_a_long_reply() -> None:
    # 21 tokens a sentence (11 + 6 ideographs, 300, mg, 2 ideographs), 8,400 in all; the
    # reference's 12 tokens all occur in order: F = 24 / (8400 + 12)
    reply = "患者诊断为急性心肌梗死，给予阿司匹林300 mg嚼服。" * 400
    score = best_text_score(reply, ["急性心肌梗死，阿司匹林300 mg"], language="zh")
    assert score == pytest.approx(24 / 8412)


# ---- normalisation and tokenisation -----------------------------------------------------


def test_normalisation() -> None:
    assert normalize_text("  The answer is:  Don't STOP,  the ACE-inhibitor!! ") == (
        "dont stop the ace inhibitor"
    )
    assert normalize_text("答案：“阿司匹林”、《指南》【推荐】…—") == "阿司匹林 指南 推荐"
    assert normalize_text("ＡＢＣ　１２３，４５６．７") == "abc 123,456.7"
    assert normalize_text("Answer: answer: 5") == "5"
    assert normalize_text("最终答案是　肺炎") == "肺炎"
    assert normalize_text("答：肺炎") == "肺炎"
    assert normalize_text("肺炎，答：是") == "肺炎 答 是"  # lead-ins only at the start
    assert normalize_text("The answer isn't clear") == "the answer isnt clear"
    assert normalize_text("2.5 mg. Then 3, 4") == "2.5 mg then 3 4"


def test_tokenisation_of_mixed_chinese_and_english() -> None:
    assert tokenize("患者CrCl为45 mL/min，予furosemide 20mg静推") == (
        "患", "者", "crcl", "为", "45", "ml", "min", "予", "furosemide", "20", "mg", "静", "推",
    )  # fmt: skip
    assert tokenize("Give 2.5 mg q8h of drug-X", "en") == (
        "give", "2.5", "mg", "q", "8", "h", "of", "drug", "x",
    )  # fmt: skip
    assert tokenize("静脉补液 then IV", "en") == ("静脉补液", "then", "iv")
    assert tokenize("静脉补液 then IV", "zh") == ("静", "脉", "补", "液", "then", "iv")
    assert tokenize("。，！") == ()


def test_language_detection() -> None:
    assert detect_language("患者CrCl为45 mL/min") == "zh"
    assert detect_language("予 furosemide") == "zh"
    assert detect_language("Start broad spectrum antibiotics") == "en"
    assert detect_language("The herb 黄芪 is used for fatigue in traditional medicine") == "en"
    assert detect_language("12.5") == "en"
    assert detect_language("") == "en"


# ---- numbers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "percent"),
    [
        ("1,234.5", 1234.5, False),
        ("1.234,5", 1234.5, False),
        ("1 234,56", 1234.56, False),
        ("0,125", 0.125, False),
        ("１，２３４", 1234.0, False),
        ("12.5%", 12.5, True),
        ("12.5 per cent", 12.5, True),
        ("-3/4", -0.75, False),
        ("1.2e-3", 0.0012, False),
        ("1.2 × 10⁻³", 0.0012, False),
        ("1.2 X 10^+3", 1200.0, False),
        ("10^(-2)", 0.01, False),
        (".5 mg", 0.5, False),
        ("答案是-5℃", -5.0, False),
        ("(140-60)", 60.0, False),
        ("BMI 24.2 kg/m²", 24.2, False),
        ("IL-6 7 pg/mL", 7.0, False),
        (r"\boxed{\dfrac{1}{8}}", 0.125, False),
        (r"1\,234 mg", 1234.0, False),
    ],
)
def test_number_formats(text: str, value: float, percent: bool) -> None:
    number = extract_number(text)
    assert number is not None
    assert number.value == pytest.approx(value, rel=1e-12)
    assert number.percent is percent


@pytest.mark.parametrize("text", ["", "no number here", "CO2 and B12", "3/0", "1e99999"])
def test_no_number(text: str) -> None:
    assert extract_number(text) is None


def test_the_answer_statement_decides_which_number() -> None:
    def value(text: str) -> float | None:
        number = extract_number(text)
        return None if number is None else number.value

    assert value("The answer is 100 mg every 12 hours") == 100
    assert value("Answer: 5 mg/kg × 70 kg = 350 mg") == 350
    assert value("Answer: 350 mg (= 5 mg/kg × 70 kg)") == 350
    assert value("Answer: 350 mg. Check: 5 × 70 = 350.") == 350
    assert value("答案如下：\n500毫克，分2次") == 500
    assert value("The answer is 4.\nWait, the final answer is 6.") == 6
    assert value("Answer: 7 \\boxed{8}") == 8
    assert value("We get 3, then 5, then 9 mL") == 9


def test_numeric_match_tolerances_and_percentages() -> None:
    assert numeric_match(101, 100) and not numeric_match(101.5, 100)  # default rel 1e-2
    assert numeric_match(0.505, 0.5)  # the boundary holds despite binary rounding
    assert numeric_match(107, 100, rel_tol=0.1) and not numeric_match(111, 100, rel_tol=0.1)
    assert numeric_match(100.4, 100, abs_tol=0.5) and not numeric_match(101, 100, abs_tol=0.5)
    assert not numeric_match(100.4, 100, abs_tol=0.0)  # only abs given: rel is 0
    assert numeric_match(ReplyNumber(12.5, percent=True), 0.125)
    assert numeric_match(ReplyNumber(12.5, percent=True), 12.5)
    assert not numeric_match(12.5, 0.125)
    assert numeric_match(0.0, 0.0) and not numeric_match(1e-9, 0.0)
    assert not numeric_match(math.nan, 1.0)
    assert check_tolerances(None, None) == (0.0, 1e-2)
    assert check_tolerances(0.5, None) == (0.5, 0.0)


# ---- the entry point --------------------------------------------------------------------


def test_grade_fields_when_the_number_decides() -> None:
    result = grade_open("The answer is 12.5%.", ["12.5 percent"], numeric_key=0.125)
    # text: [12.5] against [12.5 percent], LCS 1, F = 2/3
    assert result == OpenGrade(
        score=1.0,
        metric=OpenMetric.NUMERIC,
        status=GradeStatus.OK,
        language="en",
        number=12.5,
        percent=True,
        text_score=2 / 3,
    )


def test_grade_fields_when_the_text_decides() -> None:
    result = grade_open("给予阿司匹林", ["立即给予阿司匹林"], metric="f1")
    assert result.metric is OpenMetric.F1
    assert result.status is GradeStatus.OK
    assert result.language == "zh"
    assert result.number is None and result.percent is False
    assert result.score == result.text_score == pytest.approx(12 / 14)


def test_unparsed_grades() -> None:
    empty = grade_open("  。 ", ["肺炎"])
    assert (empty.status, empty.score, empty.metric) == (
        GradeStatus.UNPARSED,
        0.0,
        OpenMetric.ROUGE_L,
    )
    no_number = grade_open("I would need the weight.", [], numeric_key=5.0)
    assert no_number.status is GradeStatus.UNPARSED and no_number.score == 0.0
    assert no_number.metric is OpenMetric.NUMERIC and no_number.text_score is None
    falls_back = grade_open("about five milligrams", ["five milligrams"], numeric_key=5.0)
    assert falls_back.status is GradeStatus.OK and falls_back.metric is OpenMetric.ROUGE_L


def test_the_language_comes_from_the_references_and_the_reply() -> None:
    assert grade_open("aspirin", ["阿司匹林"]).language == "zh"
    assert grade_open("每次500mg", ["500 mg"]).language == "zh"
    assert grade_open("500 mg", ["500 mg"]).language == "en"
    assert grade_open("42", [], numeric_key=42).language == "en"
    assert grade_open("阿司匹林", ["aspirin"], language="zh").language == "zh"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"references": []}, "needs at least one reference or a numeric key"),
        ({"references": ["x"], "abs_tol": -0.1}, "abs_tol must be a finite number >= 0"),
        ({"references": ["x"], "rel_tol": -1e-3}, "rel_tol must be a finite number >= 0"),
        ({"references": ["x"], "rel_tol": math.nan}, "rel_tol must be a finite number >= 0"),
        ({"references": ["x"], "metric": "bleu"}, "metric must be one of 'rouge_l', 'f1'"),
        ({"references": ["x"], "language": "fr"}, "language must be 'zh', 'en' or None"),
        ({"references": [], "numeric_key": math.inf}, "numeric key must be a finite number"),
        ({"references": ["x", " ，。"]}, "reference 1 is empty after normalisation"),
        ({"references": "aspirin"}, "references must be a sequence of strings"),
    ],
)
def test_bad_input(kwargs: dict[str, Any], message: str) -> None:
    references = kwargs.pop("references")
    with pytest.raises(SynthError, match=message):
        grade_open("reply", references, **kwargs)


def test_bad_reply_and_bad_key_to_numeric_match() -> None:
    with pytest.raises(SynthError, match="the reply must be a string"):
        grade_open(None, ["x"])  # type: ignore[arg-type]
    with pytest.raises(SynthError, match="numeric key must be a finite number"):
        numeric_match(1.0, math.nan)
    with pytest.raises(SynthError, match="abs_tol must be a finite number >= 0"):
        numeric_match(1.0, 1.0, abs_tol=-1)
