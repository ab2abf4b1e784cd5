"""The offline demo behind ``cat demo``: a local server plays simulated models that
answer by generation → debate → reflection (``synth``), their answers are calibrated
(``irt``), and new models are assessed adaptively (``cat``). Wiring only; ``run`` holds it,
``command`` is the ``cat demo`` command, which ``cat`` finds through the entry point
``demo`` of the group ``cat.commands`` (``cat.cli.plugins``): ``cat`` never imports us."""
