"""Measurements, run by hand from the repository root as ``python -m benchmarks.<name>``.

Every script uses :mod:`benchmarks.harness` for host information, timing, percentiles, its
command line (``--out``, ``--repeat``, ``--quick``) and for writing
``benchmarks/results/<name>.{json,md}``. The GPU run is the package :mod:`benchmarks.gpu`.
"""
