"""The HTML report of ``cat assess --report``: ``html`` (the page and ``write_report``),
``plots`` (its three figures), ``labels`` (the ranking's row labels) and ``values`` (what
the page and the plots both read from the result)."""
