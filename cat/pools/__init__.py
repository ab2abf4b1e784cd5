"""Item pools in use: reading, importing, calibrating, checking and comparing them.

``loading`` (the strict reader, errors as ``CatError``; the format itself is the
``itempool`` package), ``importer`` and ``lm_eval`` (questions and lm-eval logs into
pools and response matrices), ``calibration_job`` (``cat calibrate``, one job for every
model: its steps and what passes between them in ``calibration_steps``, its families in
``calibration_registry``, each a module of its own functions: ``binary_calibration``,
``multidimensional_calibration`` with ``mirt_calibration``, ``graded_calibration`` with
``graded_report``, ``scored_data`` and ``scored_pool``, ``continuous_calibration``,
``mixed_calibration`` with ``mixed_report``; ``calibration`` writes a calibration into a
pool folder; ``report_keys``, the keys every fit report begins with),
``recalibration`` and ``recalibration_job``
(``cat recalibrate``: a new version on the old scale), ``check`` (``cat pool validate``),
``summary`` (``cat pool info``), ``diff`` (``cat pool diff``), ``fit``, ``fit_checks`` and
``fit_report`` (``cat pool fit``: misfit, broken items, drift), ``scenarios`` (scenario
codes of items).
"""
