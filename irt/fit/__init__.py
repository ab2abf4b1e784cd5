"""Fit diagnostics: does an item's curve, or a subject's response pattern, look like
the model's?

Nothing is imported here, so that a module of this room loads only what it uses.
"""
