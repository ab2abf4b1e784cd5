"""``cat leaderboard`` and ``cat.leaderboard``: runs of ``cat assess`` on one pool in
one table. (The package is plural so that it does not shadow the function ``cat.leaderboard``
once imported.)

``build`` (``leaderboard``: read, check and rank the runs), ``reading`` (RESULT.json
files and folders of them), ``result`` (the typed ``Leaderboard``, whose ``model_dump``
is the JSON file), ``display`` (the columns as text, for the terminal and the page),
``files`` (CSV or JSON by suffix), ``page`` and ``plot`` (the self-contained HTML page).
"""
