"""``python -m cat``: the same entry point as the ``cat`` console script."""

from cat._entry import main

if __name__ == "__main__":
    main()
