"""``python -m benchmarks.gpu``: see :mod:`benchmarks.gpu`."""

from benchmarks.gpu.cli import main

if __name__ == "__main__":
    main()
