"""The anion gap: Na − (Cl + HCO3).

Level 1 leaves potassium out, level 2 includes it, level 3 corrects the gap for albumin
(Figge). The multiple-answer items ask which results show a raised gap, the ordering
items order results by their (corrected) gap.
"""

from __future__ import annotations

import random

from ..numbers_and_text import apart, num, tr
from ..options import direction, draw_multi, draw_order, option_count
from ..records import Calc, Inputs, Pick, PoorDrawError, Scenario


def _albumin_correction(albumin: float, per_litre: bool) -> float:
    # Figge J, Jabor A, Kazda A, Fencl V. Crit Care Med 1998;26:1807-10: add 2.5 mmol/L to
    # the anion gap per 1 g/dL of albumin below normal (taken as 4.0 g/dL = 40 g/L).
    return 0.25 * (40 - albumin) if per_litre else 2.5 * (4.0 - albumin)


def _electrolytes(rng: random.Random) -> tuple[int, int, int, int]:
    # AG = Na − (Cl + HCO3) (Emmett M, Narins RG. Medicine 1977;56:38-54).
    for _ in range(100):
        na, cl, hco3 = rng.randint(128, 150), rng.randint(88, 116), rng.randint(6, 32)
        if 4 <= na - cl - hco3 <= 36:
            return na, cl, hco3, na - cl - hco3
    raise PoorDrawError


def single(rng: random.Random, lang: str, level: int) -> Calc:
    na, cl, hco3, gap = _electrolytes(rng)
    lab_en = f"Serum sodium {na} mmol/L, chloride {cl} mmol/L, bicarbonate {hco3} mmol/L"
    lab_zh = f"血钠{na} mmol/L，血氯{cl} mmol/L，碳酸氢根{hco3} mmol/L"
    if level == 1:
        q = tr(
            lang,
            f"{lab_en}. What is the anion gap (without potassium)?",
            f"{lab_zh}。不计血钾，阴离子间隙是多少？",
        )
        return Calc(
            q,
            gap,
            "mmol/L",
            0,
            "AG = Na − (Cl + HCO3)",
            "anion_gap",
            {"sodium": na, "chloride": cl, "bicarbonate": hco3},
            (
                ("bicarbonate_added", na - cl + hco3),
                ("bicarbonate_left_out", na - cl),
                ("chloride_left_out", na - hco3),
            ),
        )
    if level == 2:
        k = rng.randint(28, 65) / 10
        q = tr(
            lang,
            f"{lab_en}, potassium {num(k)} mmol/L. What is the anion gap, including potassium?",
            f"{lab_zh}，血钾{num(k)} mmol/L。计入血钾，阴离子间隙是多少？",
        )
        return Calc(
            q,
            gap + k,
            "mmol/L",
            1,
            "AG = (Na + K) − (Cl + HCO3)",
            "anion_gap_potassium",
            {"sodium": na, "chloride": cl, "bicarbonate": hco3, "potassium": k},
            (
                ("potassium_left_out", gap),
                ("potassium_subtracted", gap - k),
                ("bicarbonate_added", na + k - cl + hco3),
            ),
            slip=True,
        )
    if lang == "zh":
        alb: float = rng.randint(15, 39)
        inputs: Inputs = {"sodium": na, "chloride": cl, "bicarbonate": hco3, "albumin_g_l": alb}
        q = (
            f"{lab_zh}，血清白蛋白{num(alb)} g/L。不计血钾，以40 g/L为白蛋白正常值，"
            "经白蛋白校正后的阴离子间隙是多少？"
        )
        wrong_units = ("factor_2.5_per_g_per_l", gap + 2.5 * (40 - alb))
    else:
        alb = rng.randint(15, 39) / 10
        inputs = {"sodium": na, "chloride": cl, "bicarbonate": hco3, "albumin_g_dl": alb}
        q = (
            f"{lab_en}, albumin {num(alb)} g/dL. What is the albumin-corrected anion gap "
            "(without potassium; take 4.0 g/dL as the normal albumin)?"
        )
        wrong_units = ("factor_0.25_per_g_per_dl", gap + 0.25 * (4.0 - alb))
    corr = _albumin_correction(alb, lang == "zh")
    return Calc(
        q,
        gap + corr,
        "mmol/L",
        1,
        "AG = Na − (Cl + HCO3); corrected AG = AG + 2.5 × (4.0 − albumin g/dL)",
        "anion_gap_albumin",
        inputs,
        (
            ("uncorrected", gap),
            ("correction_subtracted", gap - corr),
            ("albumin_itself_added", gap + (0.25 if lang == "zh" else 2.5) * alb),
            wrong_units,
        ),
        slip=True,
    )


def _gap_panel(rng: random.Random, lang: str, level: int, na: int) -> tuple[str, Inputs, float]:
    cl, hco3 = rng.randint(88, 116), rng.randint(6, 32)
    gap: float = na - cl - hco3
    text = tr(lang, f"Cl {cl}, HCO₃⁻ {hco3} mmol/L", f"血氯{cl} mmol/L，碳酸氢根{hco3} mmol/L")
    inputs: Inputs = {"chloride": cl, "bicarbonate": hco3}
    if level == 3:
        if lang == "zh":
            alb: float = rng.randint(15, 40)
            text += f"，白蛋白{alb} g/L"
            inputs["albumin_g_l"] = alb
        else:
            alb = rng.randint(15, 40) / 10
            text += f", albumin {num(alb)} g/dL"
            inputs["albumin_g_dl"] = alb
        gap += _albumin_correction(alb, lang == "zh")
    return text, inputs, gap if 3 <= na - cl - hco3 <= 40 else -1.0


def multi(rng: random.Random, lang: str, level: int) -> Pick:
    na, upper = rng.randint(130, 150), rng.choice((11, 12, 14, 16))
    extra = ""
    if level == 3:
        extra = tr(
            lang,
            " Correct each gap for albumin (normal albumin 4.0 g/dL).",
            "需按白蛋白校正（白蛋白正常值按40 g/L计）。",
        )

    def verdict(gap: float) -> bool | None:
        if gap < 0:
            return None
        if gap >= upper + 2:
            return True
        return False if gap <= upper - 2 else None

    q = tr(
        lang,
        f"Several patients have a serum sodium of {na} mmol/L. Taking {upper} mmol/L as the "
        "upper limit of normal for the anion gap (calculated without potassium), which of these "
        f"results show a raised anion gap?{extra}",
        f"几位患者的血钠均为{na} mmol/L。阴离子间隙（不计血钾）以{upper} mmol/L为正常上限，"
        f"下列哪些结果提示阴离子间隙升高？{extra}",
    )
    return Pick(
        q,
        draw_multi(
            rng, option_count("multi", level), lambda: _gap_panel(rng, lang, level, na), verdict
        ),
        "AG = Na − (Cl + HCO3) (+ 2.5 × (4.0 − albumin g/dL) if corrected)",
        "raised_anion_gap",
        {"sodium": na, "upper_limit": upper},
    )


def order(rng: random.Random, lang: str, level: int) -> Pick:
    na = rng.randint(130, 150)
    descending, how = direction(rng, lang, low_high=True)
    corrected = tr(lang, "albumin-corrected ", "经白蛋白校正的") if level == 3 else ""
    normal = ""
    if level == 3:
        normal = tr(lang, " Take 4.0 g/dL as the normal albumin.", "白蛋白正常值按40 g/L计。")
    q = tr(
        lang,
        f"Several patients have a serum sodium of {na} mmol/L. Order these results by "
        f"{corrected}anion gap (without potassium), {how}.{normal}",
        f"几位患者的血钠均为{na} mmol/L。按{corrected}阴离子间隙（不计血钾）{how}排列下列结果。"
        f"{normal}",
    )
    return Pick(
        q,
        draw_order(
            option_count("order", level), lambda: _gap_panel(rng, lang, level, na), apart(0, 2)
        ),
        "AG = Na − (Cl + HCO3) (+ 2.5 × (4.0 − albumin g/dL) if corrected)",
        "panels_by_anion_gap",
        {"sodium": na, "descending": descending},
        descending,
    )


SCENARIO = Scenario("anion-gap", "Anion gap", "阴离子间隙", single, multi, order)
