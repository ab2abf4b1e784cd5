"""Concentration and dilution.

Level 1 asks for a stock volume by C1V1 = C2V2; level 2 for a diluent volume or the mg in
a % (w/v) solution; level 3 for a volume of a % stock or of a 1:N solution. The
multiple-answer items ask which preparations hold a given amount of drug, the ordering
items order solutions by their concentration after dilution.
"""

from __future__ import annotations

import random
from decimal import Decimal

from ..numbers_and_text import apart, num, tr
from ..options import direction, draw_multi, draw_order, option_count
from ..records import Calc, Inputs, Mistakes, Pick, PoorDrawError, Scenario

_STOCK = (1, 2, 4, 5, 10, 20, 25, 40, 50, 100, 200)
_TARGET = (0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 4, 5, 10, 20, 50)
_PERCENT = (0.1, 0.2, 0.25, 0.45, 0.5, 0.9, 1, 2, 2.5, 3, 5, 8.4, 10, 20, 25, 50)
_RATIOS = (100, 200, 1000, 2000, 10000)
_VOLUMES = (10, 20, 25, 50, 100, 200, 250, 500, 1000)


def _final_volume(rng: random.Random) -> int:
    return rng.choice(_VOLUMES) if rng.random() < 0.5 else rng.randint(2, 100) * 5


def single(rng: random.Random, lang: str, level: int) -> Calc:
    # C1 × V1 = C2 × V2; a p% (w/v) solution holds p g per 100 mL = 10 × p mg/mL;
    # a 1:N (w/v) solution holds 1 g in N mL = 1000 / N mg/mL.
    if level == 1 or (level == 2 and rng.random() < 0.5):
        c1 = rng.choice(_STOCK)
        c2 = rng.choice([c for c in _TARGET if c < c1])
        v2 = _final_volume(rng)
        v1 = c2 * v2 / c1
        if v1 < 0.5 or v1 > v2 * 0.9:
            raise PoorDrawError
        inputs: Inputs = {"stock_mg_ml": c1, "target_mg_ml": c2, "final_ml": v2}
        if level == 1:
            q = tr(
                lang,
                f"How many mL of a {num(c1)} mg/mL stock solution are needed to make {v2} mL of "
                f"a {num(c2)} mg/mL solution?",
                f"用{num(c1)} mg/mL的储备液配制{num(c2)} mg/mL的溶液{v2} mL，需取储备液多少毫升？",
            )
            mistakes: Mistakes = (
                ("ratio_upside_down", c1 * v2 / c2),
                ("diluent_volume_given", v2 - v1),
                ("target_concentration_ignored", v2 / c1),
            )
            return Calc(q, v1, "mL", 1, "V1 = C2 × V2 / C1", "stock_volume", inputs, mistakes)
        q = tr(
            lang,
            f"{v2} mL of a {num(c2)} mg/mL solution is to be made from a {num(c1)} mg/mL "
            "stock. How many mL of diluent must be added to the stock?",
            f"用{num(c1)} mg/mL的储备液配制{num(c2)} mg/mL的溶液{v2} mL，需加入稀释液多少毫升？",
        )
        mistakes = (
            ("stock_volume_given", v1),
            ("final_volume_given", v2),
            ("ratio_upside_down", c1 * v2 / c2 - v2),
        )
        return Calc(
            q, v2 - v1, "mL", 1, "diluent = V2 − C2 × V2 / C1", "diluent_volume", inputs, mistakes
        )
    if level == 2:
        p, x = rng.choice(_PERCENT), rng.randint(1, 100)
        q = tr(
            lang,
            f"How many mg of drug are in {x} mL of a {num(p)}% (w/v) solution?",
            f"{x} mL {num(p)}%（w/v）溶液中含药多少毫克？",
        )
        mistakes = (
            ("percent_read_as_mg_per_ml", p * x),
            ("percent_read_as_g_per_10_ml", p * 100 * x),
            ("percent_read_as_fraction", p / 100 * x),
        )
        return Calc(
            q,
            p * 10 * x,
            "mg",
            None,
            "mg = p × 10 mg/mL × mL",
            "percent_to_mass",
            {"percent": p, "volume_ml": x},
            mistakes,
        )
    if rng.random() < 0.5:
        p = rng.choice((1, 2, 5, 10, 20, 25, 50))
        c2 = rng.choice([c for c in (0.5, 1, 2, 2.5, 4, 5, 10, 20, 25, 50, 100) if c < 10 * p])
        v2 = _final_volume(rng)
        v1 = c2 * v2 / (10 * p)
        if v1 < 0.5 or v1 > v2 * 0.9:
            raise PoorDrawError
        q = tr(
            lang,
            f"How many mL of a {p}% (w/v) stock are needed to make {v2} mL of a {num(c2)} "
            "mg/mL solution?",
            f"用{p}%（w/v）的储备液配制{num(c2)} mg/mL的溶液{v2} mL，需取储备液多少毫升？",
        )
        mistakes = (
            ("percent_read_as_mg_per_ml", c2 * v2 / p),
            ("ratio_upside_down", 10 * p * v2 / c2),
            ("diluent_volume_given", v2 - v1),
        )
        return Calc(
            q,
            v1,
            "mL",
            1,
            "V1 = C2 × V2 / (10 × p)",
            "percent_stock_volume",
            {"stock_percent": p, "target_mg_ml": c2, "final_ml": v2},
            mistakes,
        )
    n = rng.choice(_RATIOS)
    d = Decimal(rng.randint(1, 100)).scaleb(-1)
    ml = d * n / 1000
    q = tr(
        lang,
        f"A drug is supplied as a 1:{n} (w/v) solution. How many mL contain {num(d)} mg?",
        f"某药规格为1:{n}（w/v）溶液，含药{num(d)} mg需多少毫升？",
    )
    mistakes = (
        ("ratio_read_as_1_mg_per_n_ml", float(d * n)),
        ("ratio_upside_down", float(d * 1000 / n)),
        ("factor_10_too_large", float(ml * 10)),
        ("factor_10_too_small", float(ml / 10)),
    )
    return Calc(
        q,
        float(ml),
        "mL",
        None,
        "1:N (w/v) = 1000/N mg/mL; mL = mg × N / 1000",
        "ratio_strength_volume",
        {"ratio": n, "mg": float(d)},
        mistakes,
    )


def _strength(rng: random.Random, lang: str, form: int) -> tuple[str, Inputs, Decimal]:
    """A solution strength as labels write it (mg/mL, % w/v, 1:N) and its mg/mL."""
    if form == 0:
        c = Decimal(str(rng.choice(_TARGET)))
        return (
            tr(lang, f"a {num(c)} mg/mL solution", f"{num(c)} mg/mL溶液"),
            {"mg_ml": float(c)},
            c,
        )
    if form == 1:
        p = Decimal(str(rng.choice(_PERCENT)))
        text = tr(lang, f"a {num(p)}% (w/v) solution", f"{num(p)}%（w/v）溶液")
        return text, {"percent": float(p)}, p * 10
    n = rng.choice(_RATIOS)
    return tr(lang, f"a 1:{n} solution", f"1:{n}溶液"), {"ratio": n}, Decimal(1000) / n


def _volume_of(lang: str, ml: Decimal, strength: str) -> str:
    return tr(lang, f"{num(ml)} mL of {strength}", f"{strength}{num(ml)} mL")


def multi(rng: random.Random, lang: str, level: int) -> Pick:
    target = Decimal(rng.randint(1, 200) * 5)
    slips = (Decimal(10), Decimal("0.1"), Decimal(2), Decimal("0.5"))

    def draw() -> tuple[str, Inputs, float]:
        strength, inputs, mg_ml = _strength(rng, lang, rng.randrange(level))
        right = rng.random() < 0.5
        ml = (target / mg_ml * (1 if right else rng.choice(slips))).normalize()
        if int(ml.as_tuple().exponent) < -2 or not Decimal("0.1") <= ml <= 1000:
            return "", {}, -1.0
        return _volume_of(lang, ml, strength), {"ml": float(ml), **inputs}, float(ml * mg_ml)

    def verdict(mg: float) -> bool | None:
        return None if mg < 0 else abs(mg - float(target)) < 1e-6

    q = tr(
        lang,
        f"Which of these preparations contain exactly {num(target)} mg of drug?",
        f"下列制剂中，哪些恰好含药{num(target)} mg？",
    )
    return Pick(
        q,
        draw_multi(rng, option_count("multi", level), draw, verdict),
        "mg = mL × mg/mL (p% = 10p mg/mL; 1:N = 1000/N mg/mL)",
        "preparations_with_amount",
        {"mg": float(target)},
    )


def order(rng: random.Random, lang: str, level: int) -> Pick:
    final = rng.randint(5, 100) * 10
    descending, how = direction(rng, lang, low_high=True)

    def draw() -> tuple[str, Inputs, float]:
        form = rng.randrange(level + 1)
        if form == level:  # the last form at every level: a powder
            mg = rng.randint(1, 200) * 5
            return tr(lang, f"{mg} mg of powder", f"药粉{mg} mg"), {"powder_mg": mg}, float(mg)
        strength, inputs, mg_ml = _strength(rng, lang, form)
        ml = Decimal(rng.randint(1, final // 2))
        return _volume_of(lang, ml, strength), {"ml": float(ml), **inputs}, float(ml * mg_ml)

    q = tr(
        lang,
        f"Each of these is diluted with water to a final volume of {final} mL. Order the "
        f"resulting solutions by concentration, {how}.",
        f"下列各药分别加水稀释至{final} mL。按所得溶液浓度{how}排列。",
    )
    return Pick(
        q,
        draw_order(option_count("order", level), draw, apart(0.1)),
        "final mg/mL = mg of drug / final volume (p% = 10p mg/mL; 1:N = 1000/N mg/mL)",
        "solutions_by_concentration",
        {"final_ml": final, "descending": descending},
        descending,
    )


SCENARIO = Scenario("dilution", "Concentration and dilution", "浓度与稀释", single, multi, order)
