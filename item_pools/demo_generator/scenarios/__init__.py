"""The eight scenarios, one module each, in the order their items appear in a pool.

Each module holds a scenario's question templates beside the formulas that compute their
keys, and ends with its ``SCENARIO``: the scenario's id and names, and its three makers of
items (``single``, ``multi``, ``order``, each called as ``maker(rng, lang, level)``).
"""

from __future__ import annotations

from ..records import Scenario
from . import anion_gap, bmi_bsa, crcl, dilution, dose, fluids, infusion, units

SCENARIOS: tuple[Scenario, ...] = (
    dose.SCENARIO,
    bmi_bsa.SCENARIO,
    crcl.SCENARIO,
    anion_gap.SCENARIO,
    units.SCENARIO,
    infusion.SCENARIO,
    dilution.SCENARIO,
    fluids.SCENARIO,
)
