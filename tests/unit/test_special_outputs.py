"""Output files that are not plain files, and outputs that fail (tester4 findings 6 and 7).

* One writer (:mod:`orchestrator.outfiles`) behind every command's output file: a symbolic
  link keeps pointing at its target, which gets the new content; a named pipe, a socket or an
  open descriptor is written through (or refused in one line), never replaced by a regular
  file; a folder is refused. (No test writes to a device in /dev: a named pipe and a socket in
  ``tmp_path`` are the special files here.)
* A full disk in the middle of a write (``ENOSPC``, simulated) is one line naming the file,
  the old file stays whole and no temporary file is left: the skew, batch, report and
  moderation writers alike.
* A full or closed standard output is one ``error:`` line and exit 2 from the console
  script, not a traceback: a pipe whose reader is gone (``EPIPE``), and a file over the
  process's size limit (``RLIMIT_FSIZE``: ``EFBIG``, the same path as ``ENOSPC``).
"""

from __future__ import annotations

import errno
import io
import json
import os
import resource
import signal
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from orchestrator import outfiles
from orchestrator.batch.results import RESULT_COLUMNS, write_results
from orchestrator.exceptions import UserError
from orchestrator.outfiles import atomic_write_text, check_writable, output_files

REPO = Path(__file__).resolve().parents[2]
ORCHESTRATOR = [sys.executable, "-m", "orchestrator.cli"]


def _no_space(*_args: object, **_kwargs: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# ------------------------------------------------------------------ links, pipes, sockets


@pytest.mark.parametrize("text", ["<html>new</html>", "报告：新内容\n"])
def test_a_link_is_followed_and_stays_a_link(tmp_path: Path, text: str) -> None:
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "report.html"
    target.write_text("old", encoding="utf-8")
    link = tmp_path / "link.html"
    link.symlink_to(target)
    assert atomic_write_text(link, text) == link
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text(encoding="utf-8") == text
    assert _names(tmp_path / "real") == ["report.html"]  # no temporary file left


def test_a_dangling_link_gets_its_target_created(tmp_path: Path) -> None:
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "made.json")
    atomic_write_text(link, "{}")
    assert link.is_symlink() and (tmp_path / "made.json").read_text() == "{}"


def test_a_link_chain_to_a_pipe_writes_into_the_pipe(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "hop").symlink_to(fifo)
    (tmp_path / "out.json").symlink_to(tmp_path / "hop")
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    atomic_write_text(tmp_path / "out.json", '{"ok": "好"}')
    reader.join(timeout=10)
    assert got == ['{"ok": "好"}']
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still a pipe, not a regular file
    assert (tmp_path / "out.json").is_symlink()


def test_a_group_of_files_into_a_pipe_and_a_file(tmp_path: Path) -> None:
    fifo = tmp_path / "results.csv"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    rows = [dict.fromkeys(RESULT_COLUMNS, "x")]
    written = write_results(rows, tmp_path / "results.xlsx", formats=["csv"])
    reader.join(timeout=10)
    assert written == [tmp_path / "results.xlsx", fifo]
    assert got and got[0].decode().splitlines()[0] == ",".join(RESULT_COLUMNS)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert (tmp_path / "results.xlsx").read_bytes()[:2] == b"PK"  # a whole xlsx (zip)


def test_a_socket_is_refused_in_one_line_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(UserError, match=r"^cannot write .*s\.sock: No such device"):
            atomic_write_text(path, "x")
        assert stat.S_ISSOCK(path.stat().st_mode)


def test_an_open_descriptor_is_written_at_its_own_offset(tmp_path: Path) -> None:
    """``--html /dev/stdout > log``: the report lands after what the process wrote, in the
    same file, and the file is not replaced (the shell still holds it). ``/proc/self/fd/N``
    names the descriptor here, as ``/dev/stdout`` does (a link to ``/proc/self/fd/1``)."""
    log = tmp_path / "log.txt"
    with log.open("w", encoding="utf-8") as handle:
        handle.write("printed first\n")
        handle.flush()
        inode = log.stat().st_ino
        atomic_write_text(f"/proc/self/fd/{handle.fileno()}", "the report\n")
        handle.write("printed after\n")
    assert log.read_text(encoding="utf-8") == "printed first\nthe report\nprinted after\n"
    assert log.stat().st_ino == inode


@pytest.mark.parametrize("kind", ["folder", "missing folder", "parent is a file"])
def test_bad_places_are_refused_before_any_work(tmp_path: Path, kind: str) -> None:
    (tmp_path / "file").write_text("x")
    path = {
        "folder": tmp_path,
        "missing folder": tmp_path / "nope" / "out.html",
        "parent is a file": tmp_path / "file" / "out.html",
    }[kind]
    for call in (check_writable, lambda p: atomic_write_text(p, "x")):
        with pytest.raises(UserError, match=r"^cannot write "):
            call(path)
    assert _names(tmp_path) == ["file"]


# ------------------------------------------------------------------ a full disk mid-write


def test_a_full_disk_keeps_the_old_file_and_leaves_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "skew.json"
    target.write_text("old")
    monkeypatch.setattr(Path, "write_text", _no_space)
    with pytest.raises(UserError, match=r"^cannot write .*skew\.json: No space left on device$"):
        atomic_write_text(target, "new")
    monkeypatch.undo()
    assert target.read_text() == "old" and _names(tmp_path) == ["skew.json"]


def test_a_full_pipe_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    monkeypatch.setattr(outfiles.shutil, "copyfileobj", _no_space)
    with pytest.raises(UserError, match=r"^cannot write .*fifo: No space left on device$"):
        # opening a pipe for writing waits for a reader: open the read end first
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            atomic_write_text(fifo, "x")
        finally:
            os.close(reader)
    assert stat.S_ISFIFO(fifo.stat().st_mode) and _names(tmp_path) == ["fifo"]


def test_a_group_is_written_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "a.md", tmp_path / "a.xlsx"
    first.write_text("old md")
    real_replace = os.replace
    calls: list[object] = []

    def replace_then_fail(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 1:
            _no_space()
        real_replace(src, dst)

    monkeypatch.setattr(outfiles.os, "replace", replace_then_fail)
    with pytest.raises(UserError, match="No space left"), output_files(first, second) as temps:
        temps[0].write_text("new md")
        temps[1].write_bytes(b"new xlsx")
    assert first.read_text() == "old md" and _names(tmp_path) == ["a.md"]


def test_batch_results_on_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "results.xlsx"
    out.write_bytes(b"old")
    monkeypatch.setattr(Path, "write_bytes", _no_space)
    rows = [dict.fromkeys(RESULT_COLUMNS, "退款")]
    with pytest.raises(UserError, match=r"^cannot write .*results\.xlsx.*: No space left"):
        write_results(rows, out, formats=["csv", "jsonl"])
    monkeypatch.undo()
    assert out.read_bytes() == b"old" and _names(tmp_path) == ["results.xlsx"]


def test_a_spreadsheet_report_on_a_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``orchestrator report --no-model --out FULL``: one line, no report file, old one kept."""
    from openpyxl import Workbook

    from orchestrator.spreadsheet import read_workbook
    from workflows.excel_report.offline import figures_only_report

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["地区", "Amount"])
    for region, amount in (("华东", 120), ("North", 80), ("华南", 95)):
        sheet.append([region, amount])
    source = tmp_path / "sales.xlsx"
    book.save(source)
    out = tmp_path / "reports"
    _, first = figures_only_report(read_workbook(source), out)
    before = first.markdown.read_text(encoding="utf-8")
    monkeypatch.setattr(Path, "write_bytes", _no_space)
    with pytest.raises(
        UserError, match=r"^cannot write .*\.report\.md, .*\.report\.xlsx: No space"
    ):
        figures_only_report(read_workbook(source), out)
    monkeypatch.undo()
    assert first.markdown.read_text(encoding="utf-8") == before
    assert _names(out) == sorted([first.markdown.name, first.xlsx.name])


def test_moderation_scorer_and_report_on_a_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workflows.content_moderation.evaluation import EvalReport, write_json

    monkeypatch.setattr(Path, "write_text", _no_space)
    report = EvalReport.model_construct(systems=[])
    monkeypatch.setattr(EvalReport, "model_dump_json", lambda *_a, **_k: "{}")
    with pytest.raises(UserError, match=r"^cannot write .*eval\.json: No space left"):
        write_json(tmp_path / "eval.json", report)
    assert _names(tmp_path) == []


# ------------------------------------------------------------------ the console script


def _script(args: list[str], **run: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # type: ignore[call-overload,no-any-return]
        [*ORCHESTRATOR, *args], cwd=REPO, stderr=subprocess.PIPE, text=True, timeout=300, **run
    )


def _one(text: str) -> str:
    """The message rich printed, its wrapping at 80 columns (a pipe) undone."""
    return " ".join(text.split())


def _error_lines(stderr: str) -> list[str]:
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def test_stdout_closed_early_is_one_line() -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone: every write is EPIPE
    try:
        done = _script(["classify", "where is my parcel? 我的包裹在哪"], stdout=write)
    finally:
        os.close(write)
    assert done.returncode == 2
    assert _error_lines(done.stderr) == [
        "error: cannot write standard output: Broken pipe (its reader closed it early)"
    ]


def test_stdout_to_a_file_that_cannot_grow_is_one_line(tmp_path: Path) -> None:
    def no_growth() -> None:  # the file-size limit: writes fail as on a full disk (EFBIG)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    with (tmp_path / "out.txt").open("w") as out:
        done = _script(["classify", "refund ORD-100076"], stdout=out, preexec_fn=no_growth)
    assert done.returncode == 2
    assert _error_lines(done.stderr) == ["error: cannot write standard output: File too large"]
    assert (tmp_path / "out.txt").stat().st_size == 0


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO, errno.EDQUOT])
def test_uncaught_output_errors_become_one_line(
    code: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from orchestrator.cli import common

    monkeypatch.setattr(common.sys, "stdout", io.StringIO())  # no fileno: nothing to redirect
    exit_ = common.uncaught_exit(OSError(code, os.strerror(code), "standard output"))
    assert isinstance(exit_, SystemExit) and exit_.code == 2
    assert _one(capsys.readouterr().err) == (
        f"error: cannot write standard output: {os.strerror(code)}"
    )
    unnamed = common.uncaught_exit(OSError(code, os.strerror(code)))  # a library's own file
    assert isinstance(unnamed, SystemExit) and unnamed.code == 2
    assert _one(capsys.readouterr().err) == (
        f"error: cannot write an output (standard output or a file): {os.strerror(code)}"
    )
    bug = ValueError("a bug keeps its traceback")
    assert common.uncaught_exit(bug) is bug
    other = OSError(errno.ENOENT, "gone")  # not an output error: re-raised as it is
    assert common.uncaught_exit(other) is other


def test_a_console_that_cannot_write_names_its_stream() -> None:
    from orchestrator.cli.common import OutputConsole

    class Full(io.StringIO):
        def write(self, _text: str) -> int:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    for stderr, name in ((False, "standard output"), (True, "standard error")):
        console = OutputConsole(file=Full(), stderr=stderr)
        with pytest.raises(OSError) as caught:
            console.print("订单 ORD-100076")
        assert caught.value.errno == errno.ENOSPC and caught.value.filename == name


def test_the_ui_user_file_stays_owner_only_through_a_link(tmp_path: Path) -> None:
    from orchestrator.cli.ui import read_users, write_users

    real = tmp_path / "secrets" / "users.json"
    real.parent.mkdir()
    real.write_text('{"users": {}}')
    real.chmod(0o644)
    link = tmp_path / "users.json"
    link.symlink_to(real)
    write_users(link, {"ann": {"role": "operator", "customer_id": None, "password_hash": "h"}})
    assert link.is_symlink() and stat.S_IMODE(real.stat().st_mode) == 0o600
    assert list(read_users(link)) == ["ann"] and _names(real.parent) == ["users.json"]


def test_json_of_the_results_is_whole(tmp_path: Path) -> None:
    """The happy path of the group writer: every file complete, normal permissions."""
    rows = [dict.fromkeys(RESULT_COLUMNS, "取消订单")]
    paths = write_results(rows, tmp_path / "r.xlsx", formats=["jsonl"])
    line = json.loads(paths[1].read_text(encoding="utf-8"))
    assert line[RESULT_COLUMNS[0]] == "取消订单"
    assert stat.S_IMODE(paths[0].stat().st_mode) == 0o666 & ~_umask()


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
