"""``python -m synth.local_server``: serve simulated models until SIGTERM or SIGINT (see
:func:`synth.local_server.server.main` for the options)."""

from synth.local_server.server import main

if __name__ == "__main__":
    raise SystemExit(main())
