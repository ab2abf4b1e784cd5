"""Item pools in use: reading, importing, calibrating, checking and comparing them.

``loading`` (the strict reader, errors as ``CatError``; the format itself is the
``itempool`` package), ``importer`` and ``lm_eval`` (questions and lm-eval logs into
pools and response matrices), ``calibration`` and ``calibration_job`` (``cat calibrate``:
params.csv, reference.jsonl, provenance; ``report_keys``, the keys every fit report
begins with), ``graded_calibration``, ``graded_report``, ``scored_data`` and
``scored_pool`` (``cat calibrate --model graded|gpcm|sequential``: scores 0..m, with
``--pool`` a pool of scored items), ``recalibration`` and ``recalibration_job``
(``cat recalibrate``: a new version on the old scale), ``check`` (``cat pool validate``),
``summary`` (``cat pool info``), ``diff`` (``cat pool diff``), ``fit``, ``fit_checks`` and
``fit_report`` (``cat pool fit``: misfit, broken items, drift), ``scenarios`` (scenario
codes of items).
"""
