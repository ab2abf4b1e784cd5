"""The ``cat`` command line: each command module parses its arguments, calls one library
function and renders the typed result; ``app`` registers them, ``help_format``,
``command_classes`` and ``usage_errors`` give plain help and one-line errors, ``common``
holds what every command shares (errors, warnings, progress)."""
