"""``python -m cat``: the entry point of the ``cat`` console script, where a command name
always means our command (``cat demo`` with a file named ``demo`` here prints the file)."""

from cat._entry import main

if __name__ == "__main__":
    main(module=True)
