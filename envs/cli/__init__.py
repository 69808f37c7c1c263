"""The ``servicegym`` command line (``main``: list, play, rollout, evaluate, report, train,
bench) and its reports (``report``: Avg@k, Pass@k, Pass^k with confidence intervals, markdown,
the Pass^k plot)."""
