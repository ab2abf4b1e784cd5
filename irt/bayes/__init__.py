"""Bayesian calibration with pyro (SVI or NUTS): the calibrator and its model.

Nothing is imported here, so that a module of this room loads only what it uses.
"""
