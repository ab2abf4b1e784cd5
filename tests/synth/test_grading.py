"""Reading the chosen option(s) out of free-text LLM replies, and grading them."""

from __future__ import annotations

import time

import pytest

from itempool import ItemType, PoolItem
from synth.errors import SynthError
from synth.grading import Grade, GradeStatus, extract_answer, grade

SINGLE, MULTI, ORDER = ItemType.SINGLE, ItemType.MULTI, ItemType.ORDER

CAPITALS = {"A": "London", "B": "Paris", "C": "Berlin", "D": "Madrid"}

# Ten options, MMLU-Pro style (question and options written for these tests).
ADVERTISING = {
    "A": "Disclosing sponsored content clearly",
    "B": "Targeting children with unhealthy snacks",
    "C": "Using unverifiable health claims",
    "D": "Comparing prices against outdated competitor data",
    "E": "Hiding subscription terms in fine print",
    "F": "Exaggerating product performance",
    "G": "Imitating a competitor's trademark",
    "H": "Offering free trials without cancellation details",
    "I": "Publishing invented customer reviews",
    "J": "Omitting every mention of side effects",
}
CONTRACTS = {
    "A": "Consideration",
    "B": "Detrimental reliance on the promise",
    "C": "A signed writing",
    "D": "Mutual mistake",
    "E": "Duress",
    "F": "Capacity of a minor",
    "G": "Unconscionability",
    "H": "Past consideration",
    "I": "Illegality of purpose",
    "J": "Frustration of purpose",
}
CHEST_PAIN = {
    "A": "Aspirin",
    "B": "Warfarin",
    "C": "Amoxicillin",
    "D": "Insulin",
    "E": "Furosemide",
    "F": "Levothyroxine",
    "G": "Omeprazole",
    "H": "Prednisone",
    "I": "Metformin",
    "J": "Haloperidol",
}
# 患者男，62岁，突发胸骨后压榨样疼痛2小时，心电图示ST段抬高，首选的处理是
STEMI_ZH = {
    "A": "急诊经皮冠状动脉介入治疗",
    "B": "口服抗生素",
    "C": "门诊观察随访",
    "D": "静脉补液",
    "E": "择期胆囊切除",
}
# 下列属于2型糖尿病常见慢性并发症的是（多选）
DIABETES_ZH = {"A": "糖尿病肾病", "B": "视网膜病变", "C": "急性阑尾炎", "D": "周围神经病变"}
# Put the steps of adult CPR in order.
CPR = {
    "A": "Open the airway",
    "B": "Give rescue breaths",
    "C": "Check responsiveness",
    "D": "Start chest compressions",
}
DRUG_PAIRS = {"A": "Paris", "B": "Paris, Texas", "C": "Rome", "D": "Roma"}

ENGLISH_SINGLE = [
    ("B", "B"),
    ("B.", "B"),
    ("(B)", "B"),
    ("**B**", "B"),
    ("B\n\n", "B"),
    ("  C  \n", "C"),
    ("b", "B"),
    ("[D]", "D"),
    ("\\boxed{B}", "B"),
    ("$\\boxed{\\text{B}}$", "B"),
    ("\\(\\boxed{\\textbf{C}}\\)", "C"),
    ("The answer is (B)", "B"),
    ("The answer is (B).", "B"),
    ("The correct answer is B.", "B"),
    ("The correct answer is: **D**", "D"),
    ("Answer: B", "B"),
    ("**Answer:** C", "C"),
    ("answer: b", "B"),
    ("ANSWER: A", "A"),
    ("Final answer: C", "C"),
    ("### Final Answer\n\nD", "D"),
    ("I choose option D", "D"),
    ("I would choose B.", "B"),
    ("We'd pick (A).", "A"),
    ("Option C is correct", "C"),
    ("Option C is the correct answer.", "C"),
    ("(D) is the correct answer.", "D"),
    ("The best answer is option A.", "A"),
    ("The answer is option B because Paris is the capital.", "B"),
    ("Answer: (A) Paris", "A"),
    ("The answer would be C.", "C"),
    ("The correct option is D.", "D"),
    ("B) Paris", "B"),
    ("B. Paris\n\nParis has been the capital of France since the Middle Ages.", "B"),
    ("Answer: A patient-facing reading is irrelevant here.", "A"),
    ("The answer is B because A is a city in England.", "B"),
    ("The answer is B, C is wrong because Berlin is in Germany.", "B"),
    ("Based on the analysis, option B (Paris) is the correct answer.", "B"),
    ("B is the answer.", "B"),
    ("I think D is correct.", "D"),
    ("Therefore, B.", "B"),
    ("The answer is therefore C", "C"),
    ("Answer: C - Berlin", "C"),
    ("The answer is $B$", "B"),
]

CHINESE_SINGLE = [
    ("答案：B", "B"),
    ("答案:B", "B"),
    ("答案是B", "B"),
    ("答案为 C", "C"),
    ("正确答案是 B", "B"),
    ("正确答案：Ｄ", "D"),
    ("故选B", "B"),
    ("故选B。", "B"),
    ("所以选择C。", "C"),
    ("本题应选A", "A"),
    ("答案：(B)", "B"),
    ("答案：（B）", "B"),
    ("【答案】B", "B"),
    ("【答案】 C\n【解析】A项错误，B项错误。", "C"),
    ("答：B", "B"),
    ("答案是选项D。", "D"),
    ("最终答案：**A**", "A"),
    ("正确的是C", "C"),
    ("正确选项为B。", "B"),
    ("选项A正确。", "A"),
    ("B项正确", "B"),
    ("答案应该是 D", "D"),
    ("我选B。", "B"),
    ("答案选C", "C"),
    ("答案是B，C项错误。", "B"),
    ("综上，选D。", "D"),
    ("所以答案是：C。", "C"),
    ("答案：B（巴黎）", "B"),
]

CHAIN_OF_THOUGHT = [
    (
        "Option A is wrong because London is the capital of the UK. B could be tempting, "
        "and D is in Spain, so the answer is C.",
        "C",
    ),
    (
        "Let's think step by step. A is a common distractor. The answer is not A. "
        "Considering B and D... Therefore, the correct answer is D.",
        "D",
    ),
    (
        "A patient might guess A here. Madrid (D) is too far south.\n\nFinal answer: B",
        "B",
    ),
    ("Hmm, I first thought the answer is A. But re-reading the question, the answer is B.", "B"),
    ("First, option B seems plausible... Wait. Actually option D is correct.", "D"),
    ("Step 1: eliminate A.\nStep 2: eliminate C and D.\n\nThe answer is $\\boxed{B}$.", "B"),
    (
        "分析：A项伦敦是英国首都，错误；B项巴黎是法国首都；C项柏林是德国首都，错误。"
        "D项马德里是西班牙首都，错误。故选B。",
        "B",
    ),
    ("首先排除A和C。如果选D，则与题干矛盾。因此答案是B。", "B"),
    ("我认为答案是A……不对，再想想，正确答案应为C。", "C"),
    ("Reasoning: A and D are wrong.\nB is plausible.\n\nC", "C"),
    ("C\n\nExplanation: A is in England and B is in France, so they cannot be right.", "C"),
    ("The answer is \\boxed{C}. Option A would only apply in a different context.", "C"),
    ("The answer is A? No, London is in England. Option C is correct.", "C"),
    # A "which statement is wrong" analysis calls other options correct; the answer line wins.
    ("【答案】B\n【解析】本题选说法错误的一项。A项正确；C项正确；D项正确；B项错误。", "B"),
    ("Options:\nA. London\nB. Paris\nC. Berlin\nD. Madrid\n\nB", "B"),
]

MMLU_PRO = [
    (
        "Let's think step by step. Regulators require that paid promotion be labelled. "
        "Options B, C, E and I describe practices they prohibit. The answer is (A).",
        ADVERTISING,
        "A",
    ),
    ("The answer is (I).", ADVERTISING, "I"),
    ("the answer is (J)", ADVERTISING, "J"),
    ("Answer: I", ADVERTISING, "I"),
    ("Answer: I think it is B", ADVERTISING, None),
    ("I choose (H).", ADVERTISING, "H"),
    ("The answer is Publishing invented customer reviews.", ADVERTISING, "I"),
    ("The answer is E, hiding subscription terms in fine print.", ADVERTISING, "E"),
    ("Answer: G\nImitating a competitor's trademark misleads consumers.", ADVERTISING, "G"),
    (
        "Promissory estoppel replaces consideration with reliance. A is the doctrine it "
        "replaces, C concerns the statute of frauds. The answer is (B).",
        CONTRACTS,
        "B",
    ),
    ("The correct answer is detrimental reliance on the promise", CONTRACTS, "B"),
    ("F", CONTRACTS, "F"),
    ("(J) Frustration of purpose", CONTRACTS, "J"),
    (
        "A 54-year-old man with crushing chest pain needs antiplatelet therapy at once. "
        "Warfarin (B) is too slow. The answer is (A).",
        CHEST_PAIN,
        "A",
    ),
    ("The answer is aspirin.", CHEST_PAIN, "A"),
    ("Answer: K", CHEST_PAIN, None),
    ("The answer is (K).", CAPITALS, None),
    ("HI", ADVERTISING, None),  # two letters, one asked for
]

CHINESE_CLINICAL = [
    ("答案：A", STEMI_ZH, "A"),
    (
        "患者为急性ST段抬高型心肌梗死，应尽快再灌注治疗。B项口服抗生素无指征；"
        "C项观察随访会延误治疗；D项补液不是首选。故选A。",
        STEMI_ZH,
        "A",
    ),
    ("正确答案是急诊经皮冠状动脉介入治疗。", STEMI_ZH, "A"),
    ("急诊经皮冠状动脉介入治疗", STEMI_ZH, "A"),
    ("【答案】A\n【解析】ST段抬高提示心肌梗死，首选急诊PCI。", STEMI_ZH, "A"),
    ("答案：E。择期胆囊切除。", STEMI_ZH, "E"),
    ("根据题干，不选B。答案为A", STEMI_ZH, "A"),
]

MULTI_CHOICE = [
    ("选 B 和 D", CAPITALS, "BD"),
    ("答案：BD", CAPITALS, "BD"),
    ("答案为A、C", CAPITALS, "AC"),
    ("答案：D、B", CAPITALS, "BD"),
    ("The answers are B and D.", CAPITALS, "BD"),
    ("The answers are B and D because both are capitals.", CAPITALS, "BD"),
    ("The correct options are A, C.", CAPITALS, "AC"),
    ("Answer: A, C, and D", CAPITALS, "ACD"),
    ("(A) and (C)", CAPITALS, "AC"),
    ("\\boxed{B, D}", CAPITALS, "BD"),
    ("B", CAPITALS, "B"),
    ("Options A and C are correct.", CAPITALS, "AC"),
    ("Option A is correct. Option B is incorrect. Option D is correct.", CAPITALS, "AD"),
    ("A项正确；B项正确；C项错误；D项正确。", DIABETES_ZH, "ABD"),
    (
        "糖尿病慢性并发症包括微血管病变和神经病变，急性阑尾炎与糖尿病无关。故选ABD。",
        DIABETES_ZH,
        "ABD",
    ),
    ("正确答案：A、B、D", DIABETES_ZH, "ABD"),
    ("答案是A、B及D", DIABETES_ZH, "ABD"),
    ("B D", CAPITALS, "BD"),
    ("B and D are correct.", CAPITALS, "BD"),
    ("Madrid.", CAPITALS, "D"),
]

ORDERING = [
    ("CABD", CPR, "CABD"),
    ("C > A > B > D", CPR, "CABD"),
    ("C, A, B, D", CPR, "CABD"),
    ("顺序：C→A→B→D", CPR, "CABD"),
    ("C-A-B-D", CPR, "CABD"),
    ("答案：CABD", CPR, "CABD"),
    ("C -> D -> A -> B", CPR, "CDAB"),
    ("The correct order is C, D, A, B.", CPR, "CDAB"),
    ("First check responsiveness (C), then compress (D).\n\nOrder: C D A B", CPR, "CDAB"),
    ("正确的排序为：D、C、A、B", CPR, "DCAB"),
    ("Option C is correct.", CPR, None),
    ("C > A > C > D", CPR, None),
    ("\\boxed{CDAB}", CPR, "CDAB"),
    ("The correct order is: C → A → B → D", CPR, "CABD"),
    # A numbered list is left unparsed: its digits are indistinguishable from a step count.
    ("1. C\n2. A\n3. B\n4. D", CPR, None),
]

OPTION_TEXT = [
    ("The answer is Paris", CAPITALS, "B"),
    ("The answer is paris.", CAPITALS, "B"),
    ("Paris", CAPITALS, "B"),
    ("**Berlin**", CAPITALS, "C"),
    ("I choose Madrid.", CAPITALS, "D"),
    ("The answer is Paris, Texas.", DRUG_PAIRS, "B"),
    ("The answer is Paris.", DRUG_PAIRS, "A"),
    ("The answer is Paris or Rome.", DRUG_PAIRS, None),
    ("The answer is not Paris.", CAPITALS, None),
    ("\\boxed{\\text{Berlin}}", CAPITALS, "C"),
    ("答案是巴黎", {"A": "伦敦", "B": "巴黎", "C": "柏林", "D": "马德里"}, "B"),
    ("Parisian cafes are famous.", CAPITALS, None),
]

# Several letters where one is asked for.
SINGLE_ONLY_UNPARSED = [
    "答案：AB",
    "The answer is A and D.",
    "Answer: A, B",
    "正确答案：ABD",
    "(A) and (C)",
]

UNPARSED = [
    ("I am not sure", CAPITALS),
    ("As an AI language model, I cannot answer this question.", CAPITALS),
    ("A patient with fever and cough should see a doctor.", CAPITALS),
    ("", CAPITALS),
    ("   \n  ", CAPITALS),
    ("The answer is a bit unclear.", CAPITALS),
    ("The answer is A or B.", CAPITALS),
    ("答案是A或B", CAPITALS),
    ("So A patient would say that.", CAPITALS),
    ("A. London\nB. Paris\nC. Berlin\nD. Madrid", CAPITALS),
    ("Hmm, is the answer A? Let me reconsider.", CAPITALS),
    ("Answer: I'm fairly confident it's one of them.", CAPITALS),
    ("这道题我无法确定。", CAPITALS),
    ("Both London and Paris are large cities.", CAPITALS),
    ("E", CAPITALS),
    ("The answer is E.", CAPITALS),
    ("OK", CAPITALS),
    ("To answer, I think about each city in turn.", CAPITALS),
    ("A", {"B": "yes", "C": "no"}),
]


@pytest.mark.parametrize(("reply", "expected"), ENGLISH_SINGLE)
def test_english_single(reply: str, expected: str) -> None:
    assert extract_answer(reply, SINGLE, CAPITALS) == expected


@pytest.mark.parametrize(("reply", "expected"), CHINESE_SINGLE)
def test_chinese_single(reply: str, expected: str) -> None:
    assert extract_answer(reply, SINGLE, CAPITALS) == expected


@pytest.mark.parametrize(("reply", "expected"), CHAIN_OF_THOUGHT)
def test_last_statement_wins(reply: str, expected: str) -> None:
    assert extract_answer(reply, SINGLE, CAPITALS) == expected


@pytest.mark.parametrize(("reply", "options", "expected"), MMLU_PRO)
def test_ten_options(reply: str, options: dict[str, str], expected: str | None) -> None:
    assert extract_answer(reply, SINGLE, options) == expected


@pytest.mark.parametrize(("reply", "options", "expected"), CHINESE_CLINICAL)
def test_chinese_clinical(reply: str, options: dict[str, str], expected: str) -> None:
    assert extract_answer(reply, SINGLE, options) == expected


@pytest.mark.parametrize(("reply", "options", "expected"), MULTI_CHOICE)
def test_multi(reply: str, options: dict[str, str], expected: str) -> None:
    assert extract_answer(reply, MULTI, options) == expected


@pytest.mark.parametrize(("reply", "options", "expected"), ORDERING)
def test_order(reply: str, options: dict[str, str], expected: str | None) -> None:
    assert extract_answer(reply, ORDER, options) == expected


@pytest.mark.parametrize(("reply", "options", "expected"), OPTION_TEXT)
def test_option_text(reply: str, options: dict[str, str], expected: str | None) -> None:
    assert extract_answer(reply, SINGLE, options) == expected


@pytest.mark.parametrize(("reply", "options"), UNPARSED)
@pytest.mark.parametrize("item_type", [SINGLE, MULTI])
def test_unparsed(reply: str, options: dict[str, str], item_type: ItemType) -> None:
    assert extract_answer(reply, item_type, options) is None


@pytest.mark.parametrize("reply", SINGLE_ONLY_UNPARSED)
def test_several_letters_are_no_single_answer(reply: str) -> None:
    assert extract_answer(reply, SINGLE, CAPITALS) is None
    assert extract_answer(reply, MULTI, CAPITALS) is not None


@pytest.mark.parametrize(
    "reply",
    [
        "A " * 10_000,
        "answer: " * 3_000,
        "选" * 10_000,
        "Option A (" * 3_000,
        "Let's think. " * 2_000 + "The answer is (C).",
    ],
)
def test_long_replies_take_linear_time(reply: str) -> None:
    # Unbounded letter lists once made such replies take minutes (quadratic scanning).
    started = time.perf_counter()
    extract_answer(reply, MULTI, ADVERTISING)
    assert time.perf_counter() - started < 5.0


def test_never_returns_a_letter_that_is_not_an_option() -> None:
    options = {"A": "yes", "B": "no"}
    for reply in ("C", "The answer is C.", "答案：C", "\\boxed{D}", "Answer: A, C"):
        got = extract_answer(reply, MULTI, options)
        assert got is None or set(got) <= set(options), reply


def _item(kind: ItemType, answer: str, options: dict[str, str] = CAPITALS) -> PoolItem:
    return PoolItem(id="q1", type=kind, question="Which?", options=options, answer=answer)


def test_grade_single_correct() -> None:
    assert grade("The answer is (B).", _item(SINGLE, "B")) == Grade("B", True, 1.0, GradeStatus.OK)


def test_grade_single_incorrect() -> None:
    assert grade("故选C", _item(SINGLE, "B")) == Grade("C", False, 0.0, GradeStatus.OK)


def test_grade_unparsed() -> None:
    result = grade("As an AI, I cannot choose.", _item(SINGLE, "B"))
    assert result == Grade(None, False, 0.0, GradeStatus.UNPARSED)
    assert result.status == "unparsed"


@pytest.mark.parametrize(
    ("reply", "correct"),
    [("答案：BD", True), ("D and B", True), ("答案：B", False), ("答案：BCD", False)],
)
def test_grade_multi_needs_the_exact_set(reply: str, correct: bool) -> None:
    result = grade(reply, _item(MULTI, "BD"))
    assert result.status is GradeStatus.OK
    assert result.correct is correct
    assert result.score == (1.0 if correct else 0.0)


@pytest.mark.parametrize(
    ("reply", "tau"),
    [
        ("CABD", 1.0),
        ("DBAC", -1.0),
        ("ACBD", 4 / 6),  # one adjacent swap of four: 5 concordant, 1 discordant
        ("CBAD", 4 / 6),
        ("ABCD", 2 / 6),  # C moved behind A and B: 4 concordant, 2 discordant
        ("ABDC", 0.0),  # C moved last: 3 concordant, 3 discordant
    ],
)
def test_grade_order_scores_kendall_tau(reply: str, tau: float) -> None:
    result = grade(reply, _item(ORDER, "CABD", CPR))
    assert result.status is GradeStatus.OK
    assert result.answer == reply
    assert result.score == pytest.approx(tau)


def test_grade_order_threshold() -> None:
    item = _item(ORDER, "CABD", CPR)
    assert grade("CABD", item).correct
    assert not grade("ACBD", item).correct  # tau 0.67 < 0.8
    assert grade("ACBD", item, order_threshold=0.6).correct
    assert grade("DBAC", item, order_threshold=-1.0).correct


@pytest.mark.parametrize("reply", ["CAB", "C > A > B > D > A", "CABDA", "I don't know"])
def test_grade_order_not_a_permutation_is_unparsed(reply: str) -> None:
    result = grade(reply, _item(ORDER, "CABD", CPR))
    assert result == Grade(None, False, 0.0, GradeStatus.UNPARSED)


@pytest.mark.parametrize("threshold", [1.5, -1.01, float("nan"), float("inf")])
def test_grade_rejects_bad_threshold(threshold: float) -> None:
    with pytest.raises(SynthError, match="order_threshold"):
        grade("CABD", _item(ORDER, "CABD", CPR), order_threshold=threshold)


def test_grade_is_a_frozen_value() -> None:
    result = grade("B", _item(SINGLE, "B"))
    with pytest.raises(AttributeError):
        result.correct = False  # type: ignore[misc]
