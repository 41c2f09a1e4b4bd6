"""Parametrize tables kept as data, in ``tests/data/cases/<file>`` (TOML, or JSON where a
case holds ``None``).

A file holds named tables; a table is a list of rows, one a test case, one column a
parameter of ``pytest.mark.parametrize`` (a one-parameter table is a list of bare values).
Rows come back as tuples, so pytest names each case as it would a literal list of tuples.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

CASES = Path(__file__).resolve().parents[1] / "data" / "cases"


def cases(file: str, table: str) -> list[Any]:
    """The rows of ``table`` in ``tests/data/cases/<file>`` (``file`` with its ``.toml`` or
    ``.json`` ending): each a tuple, or the bare value where a row is not a list.

    Raises:
        KeyError: the file has no such table (the message names the tables it has).
    """
    found = tables(file)
    if table not in found:
        raise KeyError(f"{CASES / file} has no table {table!r}; its tables: {sorted(found)}")
    return found[table]


def tables(file: str) -> dict[str, list[Any]]:
    """Every table of ``tests/data/cases/<file>`` by its name, each row as :func:`cases` gives it
    (for a test file that reads many tables of one file)."""
    path = CASES / file
    text = path.read_text(encoding="utf-8")
    found = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    return {
        name: [tuple(row) if isinstance(row, list) else row for row in rows]
        for name, rows in found.items()
    }
