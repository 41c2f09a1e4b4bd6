"""The GPU run's older entry point: ``PYTHONPATH=. python benchmarks/gpu_run.py CMD`` is
``python -m benchmarks.gpu CMD`` (see :mod:`benchmarks.gpu`), kept so that the commands
recorded in ``benchmarks/results/gpu_2026-11-29*.md`` still reproduce those runs."""

from benchmarks.gpu.cli import main

if __name__ == "__main__":
    main()
