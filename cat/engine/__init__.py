"""The adaptive test engine: pure numpy, no files, no network.

``estimators`` (ML, MAP, EAP, WLE ability estimates), ``selection`` (maximum information,
random, randomesque), ``selection_kl`` (Kullback–Leibler), ``selection_strata``
(a-stratified), ``constraints`` (content balancing, exposure caps), ``exposure``
(Sympson–Hetter), ``stopping`` (length and SE rules), ``registry`` (the one table of
policy and estimator names), ``simulation`` (many simulated or replayed examinees at
once), ``simulate_job`` and ``simulate_result`` (``cat simulate`` as a function and its
typed result), ``pool_params`` (a loaded pool's parameters), ``answers`` (the answers
given, gathered for the estimators).

The engine is the lowest floor of ``cat`` above its shared basics: it imports nothing
from ``cat.designs``, ``cat.prediction``, ``cat.pools`` or above (tests/cat/test_layers.py).
"""
