"""One model's assessment, the main job (``cat assess``, ``cat.assess``).

``session`` (one examinee's adaptive test, by the engine or a reference design, saved
and resumed), ``examinees`` (simulated, replayed, or a live model behind an endpoint),
``run`` (the loop of asking and recording), ``summary`` (θ, predicted accuracy, rank, person fit),
``result`` (RESULT.json as pydantic models) and ``assess`` (all of it, resumable).
"""
