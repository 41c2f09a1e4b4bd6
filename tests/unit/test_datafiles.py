"""orchestrator.datafiles: TOML into pydantic with file:line errors, content hash, hot reload.

Files are written to ``tmp_path``; modification times are set with ``os.utime`` (never by
sleeping), and ``interval_s=0`` makes every ``get()`` look at the files.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.datafiles import (
    HotReloader,
    content_hash,
    file_signature,
    load_toml,
    locate_line,
    read_toml,
)
from orchestrator.exceptions import DataFileError


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    weight: float = Field(ge=0, le=1)


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_chars: int = Field(ge=1)


class Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: str
    limits: Limits
    entry: tuple[Entry, ...]


GOOD = """version = "1"

[limits]
max_chars = 10

[[entry]]
id = "a"
weight = 0.5

[[entry]]
id = "b"
weight = 0.25
"""


class CustomError(DataFileError):
    """A caller's own subclass, raised instead of the base."""


def _write(tmp_path: Path, text: str, name: str = "doc.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _line(text: str, starts: str, nth: int = 0) -> int:
    """1-based line of the ``nth`` line that starts with ``starts``."""
    hits = [i + 1 for i, line in enumerate(text.splitlines()) if line.startswith(starts)]
    return hits[nth]


def _set_mtime(path: Path, step_s: int) -> None:
    """Move the file's mtime ``step_s`` seconds ahead of now (a change the signature sees)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + step_s * 1_000_000_000))


# ---------------------------------------------------------------------- loading


def test_a_good_file_loads_with_entry_lines(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD)
    loaded = load_toml(path, Doc)
    assert loaded.value.entry[1].id == "b" and loaded.text == GOOD and loaded.path == path
    assert loaded.line_of("entry", 1) == _line(GOOD, "[[entry]]", 1)
    assert loaded.line_of("entry", 0, "weight") == _line(GOOD, "weight", 0)


def test_toml_syntax_error_names_its_line(tmp_path: Path) -> None:
    text = GOOD.replace('id = "b"', 'id = = "b"')
    path = _write(tmp_path, text)
    with pytest.raises(DataFileError) as info:
        load_toml(path, Doc)
    line = _line(text, "id = =")
    assert info.value.line == line and info.value.path == path
    assert str(info.value).startswith(f"{path}:{line}: not valid TOML")


@pytest.mark.parametrize(
    ("edit", "starts", "nth", "field"),
    [
        (("weight = 0.25", "weight = 2"), "weight", 1, "entry.1.weight"),
        (('id = "a"', 'id = "a"\ncolour = "red"'), "colour", 0, "entry.0.colour"),
        (("max_chars = 10", "max_chars = 0"), "[limits]", 0, "limits.max_chars"),
        (('version = "1"', "version = 1"), "version", 0, "version"),
    ],
)
def test_validation_error_names_the_line_of_the_key(
    tmp_path: Path, edit: tuple[str, str], starts: str, nth: int, field: str
) -> None:
    text = GOOD.replace(*edit)
    path = _write(tmp_path, text)
    with pytest.raises(DataFileError) as info:
        load_toml(path, Doc)
    line = _line(text, starts, nth)
    assert info.value.line == line
    assert str(info.value).startswith(f"{path}:{line}: {field}: ")


def test_a_missing_key_points_at_its_entry(tmp_path: Path) -> None:
    text = GOOD.replace('id = "b"\n', "")
    with pytest.raises(DataFileError) as info:
        load_toml(_write(tmp_path, text), Doc)
    assert info.value.line == _line(text, "[[entry]]", 1)
    assert "entry.1.id: Field required" in str(info.value)


def test_several_problems_are_counted(tmp_path: Path) -> None:
    text = GOOD.replace("weight = 0.5", "weight = 5").replace("weight = 0.25", "weight = 7")
    with pytest.raises(DataFileError, match=r"\(and 1 more problem\(s\)\)"):
        load_toml(_write(tmp_path, text), Doc)


def test_unreadable_and_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "doc.toml"
    path.write_bytes(b'version = "\xff"\n')
    with pytest.raises(DataFileError, match="cannot read as UTF-8 text") as info:
        load_toml(path, Doc)
    assert info.value.line is None and str(info.value).startswith(f"{path}: ")
    missing = tmp_path / "nope.toml"
    with pytest.raises(DataFileError, match="cannot read as UTF-8 text"):
        read_toml(missing)
    with pytest.raises(DataFileError) as info:
        read_toml(missing, missing_reason="file not found; pass an existing doc")
    assert str(info.value) == f"{missing}: file not found; pass an existing doc"


def test_the_callers_error_class_is_raised(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD.replace("weight = 0.5", "weight = 5"))
    with pytest.raises(CustomError):
        load_toml(path, Doc, error=CustomError)
    with pytest.raises(CustomError):
        read_toml(_write(tmp_path, "x = = 1\n", "bad.toml"), error=CustomError)


def test_locate_line_edge_cases() -> None:
    text = '[[rule]]\nid = "a"\n[other]\nweight = 1\n[[rule]]\nid = "b"\n'
    # the key after another table's header belongs to that table, not to the entry
    assert locate_line(text, ("rule", 0, "weight")) == 1
    assert locate_line(text, ("rule", 1, "id")) == 6
    assert locate_line(text, ("rule", 5)) is None
    assert locate_line(text, ()) is None
    assert locate_line(text, ("missing",)) is None


def test_content_hash_is_a_short_sha256_of_the_parts() -> None:
    assert content_hash("a = 1\n") == hashlib.sha256(b"a = 1\n").hexdigest()[:12]
    assert content_hash("a", b"\0", "b", digits=8) == hashlib.sha256(b"a\0b").hexdigest()[:8]
    assert content_hash("a") != content_hash("b")


def test_file_signature_sees_size_mtime_and_disappearance(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD)
    first = file_signature([path])
    _set_mtime(path, 1)
    second = file_signature([path])
    assert first != second and second[0][0] == str(path)
    path.unlink()
    assert file_signature([path]) == ((str(path), None, None),)


# ---------------------------------------------------------------------- hot reload


def _reloader(path: Path, interval_s: float | None = 0) -> HotReloader[Doc]:
    return HotReloader(
        lambda: load_toml(path, Doc).value,
        [path],
        interval_s=interval_s,
        what="doc",
        version=lambda doc: doc.version,
        logger=logging.getLogger("test_datafiles"),
    )


def test_a_changed_file_is_swapped_in(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD)
    live = _reloader(path)
    assert live.get().version == "1"
    path.write_text(GOOD.replace('version = "1"', 'version = "2"'), encoding="utf-8")
    _set_mtime(path, 1)
    assert live.get().version == "2" and live.last_error is None


def test_a_broken_edit_is_logged_and_the_last_good_value_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(tmp_path, GOOD)
    live = _reloader(path)
    good = live.get()
    path.write_text(GOOD.replace("weight = 0.5", "weight = 5"), encoding="utf-8")
    _set_mtime(path, 1)
    with caplog.at_level(logging.ERROR, logger="test_datafiles"):
        assert live.get() is good
    assert live.last_error is not None and "entry.0.weight" in live.last_error
    assert any(
        "doc reload failed, keeping the last good doc (version 1)" in r.getMessage()
        for r in caplog.records
    )
    # not retried until the file changes again; then a fixed file goes live
    assert live.reload() is False and live.value is good
    path.write_text(GOOD.replace('version = "1"', 'version = "3"'), encoding="utf-8")
    _set_mtime(path, 2)
    assert live.get().version == "3" and live.last_error is None


def test_a_deleted_file_keeps_the_last_good_value(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD)
    live = _reloader(path)
    path.unlink()
    assert live.get().version == "1"
    assert live.last_error is not None and "doc.toml" in live.last_error


def test_the_interval_bounds_how_often_files_are_checked(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD)
    live = _reloader(path, interval_s=3600)
    path.write_text(GOOD.replace('version = "1"', 'version = "2"'), encoding="utf-8")
    _set_mtime(path, 1)
    assert live.get().version == "1"  # the next check is an hour away
    assert live.reload() is True and live.get().version == "2"  # an explicit reload looks now
    never = _reloader(path, interval_s=None)
    path.write_text(GOOD.replace('version = "1"', 'version = "4"'), encoding="utf-8")
    _set_mtime(path, 2)
    assert never.get().version == "2"


def test_a_folder_watch_sees_new_files(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a.txt").write_text("1", encoding="utf-8")

    def total() -> int:
        return sum(int(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.txt")))

    live = HotReloader(total, lambda: sorted(folder.glob("*.txt")), interval_s=0)
    assert live.get() == 1
    (folder / "b.txt").write_text("2", encoding="utf-8")
    assert live.get() == 3


def test_the_first_load_raises_and_unlisted_errors_propagate(tmp_path: Path) -> None:
    path = _write(tmp_path, "x = = 1\n")
    with pytest.raises(DataFileError):
        _reloader(path)
    calls = iter([1, "boom"])

    def load() -> int:
        value = next(calls)
        if value == "boom":
            raise KeyError("a bug, not a broken edit")
        return int(value)

    good = _write(tmp_path, GOOD, "good.toml")
    live = HotReloader(load, [good], interval_s=0)
    _set_mtime(good, 1)
    with pytest.raises(KeyError):
        live.get()


def test_concurrent_readers_see_a_whole_value(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD)
    live = _reloader(path)
    seen: list[str] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            doc = live.get()
            seen.append(f"{doc.version}/{doc.limits.max_chars}")

    readers = [threading.Thread(target=read) for _ in range(2)]
    for t in readers:
        t.start()
    for step in range(1, 6):
        text = GOOD.replace('version = "1"', f'version = "{step}"')
        path.write_text(text.replace("max_chars = 10", f"max_chars = {step}"), encoding="utf-8")
        _set_mtime(path, step)
        live.reload()
    stop.set()
    for t in readers:
        t.join()
    live.reload()  # a reader may have held the lock (and read an older file) at the last write
    assert live.value.version == "5"
    assert all(v == "1/10" or v.split("/")[0] == v.split("/")[1] for v in seen)
