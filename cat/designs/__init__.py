"""Adaptive designs built on the reference models' own answers rather than on one θ.

With one θ, every θ-targeted criterion is maximum information, and its items are
unrepresentative of the pool; these designs aim at the full-pool score itself
(``../shared/DESIGN.md``, "Designs that beat random items").

- ``references``: the references' answers as a dense matrix (missing ones filled).
- ``mixture``: the new model as a reweighted mixture of the references; selection by
  expected reduction of the predicted score's variance.
- ``low_rank``: a K-factor logistic model of the references' answers; the new model's
  factors by MAP, selection by the reduction of the predicted score's variance.
- ``replay``: run a design on recorded answers, predicting at several test lengths.
- ``per_scenario``: accuracy per scenario from the answers given and a design's chances
  on the rest; ``flatness``: whether a model's answers follow the items' difficulty at
  all. Both serve the designs here and the predictions and checks above them.
"""
