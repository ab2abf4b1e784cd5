"""Putting calibrations on one scale: linking a new calibration to an old one's θ
scale, fixed-anchor calibration, and difficulty drift between periods.

Nothing is imported here, so that a module of this room loads only what it uses.
"""
