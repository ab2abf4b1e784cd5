"""From an adaptive test to the full-benchmark score, and how well that works.

``predictors`` (plug-in with the references' offset, ridge across references),
``conformal`` (split-conformal 90% half-widths), ``cross_fit`` (the references' left-out
errors a pool stores), ``validation`` (replaying held-out subjects through the test) and
``validation_report`` (``cat validate`` as a function and its typed result).
"""
