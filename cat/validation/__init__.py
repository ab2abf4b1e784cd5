"""``cat validate`` as a function (``report.validate``, ``cat.validate``) and its typed
result, VALID.json.

A job above the pools: it reads the response and scenario files, and a scored run takes
its item types from the graded calibration's rules (``cat.pools``); the replays and
intervals it reports come from ``cat.prediction``, which stands below the pools.
"""
