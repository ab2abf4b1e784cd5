"""LLM response synthesis: generation → debate → reflection over OpenAI-compatible
endpoints, answer grading (choice and open items, scores 0..max_score, an optional LLM
judge), and a crash-proof run store (DESIGN.md, issues 4 and 15).

Names are imported on first use, so that ``import synth.errors`` (which every ``cat``
command does) does not load the ``openai`` client.
"""

from __future__ import annotations

from irt.lazy import lazy_attributes
from synth.errors import SynthError

_WHERE = {
    "ChatBackend": "synth.backend",
    "ChatReply": "synth.backend",
    "ChatRequest": "synth.backend",
    "OpenAIBackend": "synth.backend",
    "RetryPolicy": "synth.backend",
    "Grade": "synth.grading",
    "GradeStatus": "synth.grading",
    "extract_answer": "synth.grading",
    "grade": "synth.grading",
    "OpenGrade": "synth.open_grading",
    "OpenMetric": "synth.open_grading",
    "grade_open": "synth.open_grading",
    "Agent": "synth.participants",
    "Participant": "synth.participants",
    "make_participants": "synth.participants",
    "parse_agents": "synth.participants",
    "RunProgress": "synth.runner",
    "RunSettings": "synth.runner",
    "SynthRunner": "synth.runner",
    "JudgeAgreement": "synth.report",
    "JudgeSummary": "synth.report",
    "ParticipantSummary": "synth.report",
    "ReflectionFlips": "synth.report",
    "StoreTotals": "synth.report",
    "SynthesisReport": "synth.report",
    "run_synthesis": "synth.job",
    "CallRecord": "synth.store",
    "Judgement": "synth.store",
    "Result": "synth.store",
    "RunStore": "synth.store",
    "ExportCounts": "synth.export_calls",
    "export_calls": "synth.export_calls",
    "export_samples": "synth.export_calls",
    "ItemScore": "synth.scoring",
    "score_reply": "synth.scoring",
    "Judge": "synth.judge",
    "JudgeScore": "synth.judge",
    "judge_messages": "synth.judge",
    "parse_judge_score": "synth.judge",
    "Agreement": "synth.agreement",
    "agreement": "synth.agreement",
}

__all__ = ["SynthError", *sorted(_WHERE)]


__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)
