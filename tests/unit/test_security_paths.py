"""Path traversal (issue 18, part 6): every path a request or a batch row can carry.

Paths enter in two places: :attr:`Attachment.path` of a :class:`Request` (the chat UI's
uploads, ``orchestrator report``, library callers) and the ``attachment`` column of a batch
row. The only workflow that opens an attachment is ``excel_report``; customer service reads
attachment *names* only (as evidence in its reply) and moderation none. So:

* ``excel_report`` opens an attachment only inside its allowed folders, symlinks resolved
  (:func:`orchestrator.request.resolve_attachment_path`); every hostile path below is
  rejected with a reason, before any byte is read and without a model call or a report file;
* a batch row's attachment is resolved inside the batch's folder
  (:func:`orchestrator.batch.inputs.resolve_attachment`) and refused otherwise;
* customer service never opens a path, whatever it is.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator import Attachment, Orchestrator, Request, TelemetryStore
from orchestrator.batch.inputs import resolve_attachment
from orchestrator.exceptions import UserError
from orchestrator.request import resolve_attachment_path
from orchestrator.testing import ScriptedModel
from tests.fixtures import spreadsheets as fx
from workflows.customer_service import CustomerServiceWorkflow
from workflows.excel_report import ExcelReportWorkflow, ReportConfig
from workflows.excel_report.encoding import ByteCounter

SECRET = "TOP-SECRET-0042"


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """``(allowed, outside)``: an upload folder, and a sibling holding a real workbook and a
    secret text file that no request may reach."""
    allowed, outside = tmp_path / "uploads", tmp_path / "private"
    allowed.mkdir()
    outside.mkdir()
    fx.sales_workbook(outside / "payroll.xlsx", rows=6)
    (outside / "secret.csv").write_text(f"name,value\nkey,{SECRET}\n", encoding="utf-8")
    return allowed, outside


def _hostile(allowed: Path, outside: Path) -> dict[str, str]:
    """Name -> a path an attacker can put in a request or a batch row."""
    (allowed / "link.xlsx").symlink_to(outside / "payroll.xlsx")  # a link out of the folder
    (allowed / "dirlink").symlink_to(outside, target_is_directory=True)
    (allowed / "loop.xlsx").symlink_to(allowed / "loop.xlsx")  # a symlink loop
    (allowed / "folder.xlsx").mkdir()  # not a file
    os.mkfifo(allowed / "fifo.csv")  # opening it would block
    return {
        "dotdot": str(allowed / ".." / "private" / "payroll.xlsx"),
        "relative-dotdot": os.path.relpath(outside / "payroll.xlsx"),
        "absolute-outside": str(outside / "secret.csv"),
        "etc-passwd": "/etc/passwd",
        "proc-environ": "/proc/self/environ",
        "symlink-out": str(allowed / "link.xlsx"),
        "symlinked-folder": str(allowed / "dirlink" / "payroll.xlsx"),
        "symlink-loop": str(allowed / "loop.xlsx"),
        "nul-byte": str(allowed / "a\x00.xlsx"),
        "a-folder": str(allowed / "folder.xlsx"),
        "fifo": str(allowed / "fifo.csv"),
        "home-tilde": "~/.ssh/id_rsa",
        "url": "file:///etc/passwd",
    }


NAMES = [
    "dotdot",
    "relative-dotdot",
    "absolute-outside",
    "etc-passwd",
    "proc-environ",
    "symlink-out",
    "symlinked-folder",
    "symlink-loop",
    "nul-byte",
    "a-folder",
    "fifo",
    "home-tilde",
    "url",
]


@pytest.fixture(params=NAMES)
def hostile(request: pytest.FixtureRequest, folders: tuple[Path, Path]) -> tuple[Path, str]:
    """``(allowed, path)``: the upload folder, and one way out of it (each of :data:`NAMES`)."""
    allowed, outside = folders
    return allowed, _hostile(allowed, outside)[request.param]


def test_resolve_attachment_path_refuses_every_way_out(hostile: tuple[Path, str]) -> None:
    allowed, path = hostile
    with pytest.raises(UserError) as info:
        resolve_attachment_path(path, [allowed])
    message = str(info.value)
    assert repr(path)[1:-1][:20] in message or "cannot be resolved" in message, message
    assert any(w in message for w in ("outside the allowed", "not a file", "cannot be resolved"))


def test_a_file_inside_the_allowed_folder_resolves_to_its_real_path(
    folders: tuple[Path, Path],
) -> None:
    allowed, outside = folders
    shutil.copy(outside / "payroll.xlsx", allowed / "q3.xlsx")
    (allowed / "inner").mkdir()
    (allowed / "inner" / "alias.xlsx").symlink_to(allowed / "q3.xlsx")  # a link that stays in
    assert resolve_attachment_path(allowed / "q3.xlsx", [allowed]) == (allowed / "q3.xlsx")
    assert (
        resolve_attachment_path(allowed / "inner" / "alias.xlsx", [allowed])
        == (allowed / "q3.xlsx").resolve()
    )
    with pytest.raises(UserError, match="no folder is allowed"):
        resolve_attachment_path(allowed / "q3.xlsx", [])


async def test_excel_report_rejects_hostile_attachment_paths_unread(
    hostile: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    allowed, path = hostile
    opened: list[str] = []
    from workflows.excel_report import graph

    real_read: Callable = graph.read_workbook

    def spy(p, *a, **k):  # type: ignore[no-untyped-def]
        opened.append(str(p))
        return real_read(p, *a, **k)

    monkeypatch.setattr(graph, "read_workbook", spy)
    out = tmp_path / "reports"
    workflow = ExcelReportWorkflow(
        ReportConfig(output_dir=out, attachment_dirs=(allowed,)), ByteCounter()
    )
    model = ScriptedModel(json_reply='{"findings": []}')
    store = TelemetryStore(f"sqlite:///{tmp_path / 'tel.db'}")
    request = Request(
        text="Summarise the attached spreadsheet as a report",
        attachments=(Attachment(filename="q3.xlsx", path=path),),
    )
    outcome = await Orchestrator(model, store, [workflow]).handle(request)
    assert outcome.workflow == "excel_report"
    assert outcome.status == "rejected", outcome
    assert opened == []  # never read
    assert model.calls == []  # no model call either
    assert not out.exists()  # no report written
    assert SECRET not in (outcome.error or "") + str(outcome.result)
    (row,) = store.requests()
    assert row.status == "rejected"
    store.close()


async def test_excel_report_reads_a_workbook_from_an_allowed_folder(
    folders: tuple[Path, Path], tmp_path: Path
) -> None:
    allowed, outside = folders
    shutil.copy(outside / "payroll.xlsx", allowed / "q3.xlsx")
    workflow = ExcelReportWorkflow(
        ReportConfig(output_dir=tmp_path / "reports", attachment_dirs=(allowed,)), ByteCounter()
    )
    store = TelemetryStore(f"sqlite:///{tmp_path / 'tel.db'}")
    request = Request(
        text="Summarise the attached spreadsheet as a report",
        attachments=(Attachment(filename="q3.xlsx", path=str(allowed / "q3.xlsx")),),
    )
    outcome = await Orchestrator(
        ScriptedModel(json_reply='{"findings": []}'), store, [workflow]
    ).handle(request)
    assert outcome.status == "succeeded" and outcome.result["status"] == "succeeded"
    store.close()


def test_batch_row_attachment_outside_the_batch_folder_is_refused(
    hostile: tuple[Path, str],
) -> None:
    allowed, path = hostile
    resolved, problem = resolve_attachment(path, allowed)
    assert resolved is None and problem, (resolved, problem)
    assert SECRET not in problem


async def test_customer_service_never_opens_an_attachment_path(
    folders: tuple[Path, Path], tmp_path: Path
) -> None:
    _allowed, outside = folders
    store = TelemetryStore(f"sqlite:///{tmp_path / 'tel.db'}")
    request = Request(
        text="I want a refund for my broken order, photo attached",
        attachments=(Attachment(filename="photo.jpg", path=str(outside / "secret.csv")),),
    )
    outcome = await Orchestrator(
        ScriptedModel(["We are on it."], json_reply='{"issue_type": "refund", '
                      '"urgency": "low", "sentiment": "neutral"}'),
        store,
        [CustomerServiceWorkflow()],
    ).handle(request)  # fmt: skip
    assert outcome.workflow == "customer_service"
    text = str(outcome.result)
    assert "photo.jpg" in text  # the name is used as evidence
    assert SECRET not in text and str(outside) not in text  # the file is never read
    store.close()


def test_the_default_allowed_folders_keep_system_files_out() -> None:
    import tempfile

    from orchestrator.config import Settings

    dirs = ReportConfig().attachment_dirs
    assert Path.cwd() in dirs and Path(tempfile.gettempdir()) in dirs
    assert Path(Settings().data_dir) in dirs
    for path in ("/etc/passwd", "/proc/self/environ", str(Path.home() / ".ssh" / "id_rsa")):
        with pytest.raises(UserError):
            resolve_attachment_path(path, dirs)
