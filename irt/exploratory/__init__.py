"""Exploratory structure: low-rank logistic factors of a response matrix, rotation
of a multidimensional model's factors, scenario factors on a one-θ fit.

Nothing is imported here, so that a module of this room loads only what it uses.
"""
