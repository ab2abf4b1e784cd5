"""From an adaptive test to the full-benchmark score, and how well that works.

``predictors`` (plug-in with the references' offset, ridge across references),
``conformal`` (split-conformal 90% half-widths), ``intervals`` (the θ-only interval and
its widening, shared by ``cat assess`` and ``cat validate``), ``cross_fit`` (the
references' left-out errors a pool stores), ``replay`` (calibrate on some subjects,
replay others under each policy), ``training_only`` (held-out subjects' intervals from
the training subjects' cross-fitted errors), ``validation`` and ``predictions``
(replaying held-out subjects through the test) and ``verdicts`` (the default against
the best random row). ``cat validate`` as a function, which reads the files and
calibrates, stands above the pools in ``cat.validation``.
"""
