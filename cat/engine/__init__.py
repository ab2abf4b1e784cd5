"""The adaptive test engine: pure numpy, no files, no network.

``estimators`` (ML, MAP, EAP, WLE ability estimates), ``selection`` (maximum information,
random, randomesque), ``selection_kl`` (Kullback–Leibler), ``selection_strata``
(a-stratified), ``constraints`` (content balancing, exposure caps), ``exposure``
(Sympson–Hetter), ``stopping`` (length and SE rules), ``registry`` (the one table of
policy and estimator names), ``session`` (one examinee's test, saved and resumed),
``simulation`` (many simulated or replayed examinees at once), ``simulate_job`` and
``simulate_result`` (``cat simulate`` as a function and its typed result), ``answers``
(the answers given, gathered for the estimators).
"""
