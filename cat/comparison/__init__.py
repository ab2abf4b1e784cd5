"""A paired adaptive comparison of two models (``cat compare``, ``cat.compare``).

``criterion`` (the item that most narrows the predicted accuracy difference),
``plugin`` (each model's predicted accuracy and the difference's interval),
``predictors`` (the IRT plug-in or the reference mixture, by the pool's cross-fitted
errors), ``interval`` (the posterior half-width and the conformal one of the pool's
errors of reference pairs), ``settings`` (the looks and levels of the stopping rule),
``paired`` (the test of two models on the same items, its stopping rule and decision),
``context`` (what a comparison takes from its pool), ``result`` (COMPARE.json as
pydantic models), ``assemble`` (the result from a finished comparison), ``compare``
(two examinees, from the first item to the result) and ``from_results`` (the same
estimate from two RESULT.json files of ``cat assess``).
"""
