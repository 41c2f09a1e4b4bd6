"""An upload session's owner record is retired, never freed (orchestrator.ui.owners; app14,
closing12 "noticed, left alone").

Until now the records in ``<uploads>/.owners/`` were never removed: one file per upload session
that ever named a file. Sweeping them would have let anyone claim an old session id again
(Chainlit lets a browser choose it). Now a session whose folder is gone (Chainlit deleted it when
the session ended) is retired at the service's next start: its record file goes, its id joins a
compact list of retired ids, and no one, its old owner included, can bind it again, even when
the retirement races the binds of other processes."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from starlette.testclient import TestClient
from test_ui_owners12 import _app

from orchestrator.config import Settings
from orchestrator.ui.auth import Caller
from orchestrator.ui.owners import RETIRED, OwnerRecords, Ownership

BOB = Caller(name="bob", role="customer", customer_id="C00002", session="s-old")
ANN = Caller(name="ann", role="customer", customer_id="C00001", session="s-old")


def _sessions(folder: Path, *names: str) -> Ownership:
    own = Ownership(folder / "uploads", folder / "reports", {})
    for name in names:
        (own.uploads / name).mkdir(parents=True)
        (own.uploads / name / "sheet.csv").write_text("a,b\n1,2\n")
        sheet = (own.uploads / name / "sheet.csv").resolve()
        assert own.owns_upload(BOB.model_copy(update={"session": name}), sheet)
    return own


def test_an_ended_session_is_retired_and_never_bound_again(tmp_path: Path) -> None:
    own = _sessions(tmp_path, "s-old", "s-live")
    for path in (own.uploads / "s-old").iterdir():
        path.unlink()
    (own.uploads / "s-old").rmdir()  # Chainlit ended the session
    assert own.sweep_sessions() == 1
    records = [p for p in own.sessions.root.iterdir() if p.is_file()]
    assert records == [own.sessions._record("s-live")]  # the ended one's file is gone
    # the id is back in a browser (ann's, or bob's again) with a file in it: no one owns it
    (own.uploads / "s-old").mkdir()
    (own.uploads / "s-old" / "sheet.csv").write_text("a,b\n1,2\n")
    for caller in (ANN, BOB):
        assert not own.owns_upload(caller, (own.uploads / "s-old" / "sheet.csv").resolve())
    assert own.sessions.owner("s-old") is None  # and nothing was recorded by trying
    assert own.sessions.bind("s-old", ANN.key) == RETIRED
    assert own.sessions.owner("s-live") == BOB.key  # a live session keeps its owner
    assert own.sweep_sessions() == 0  # nothing more to retire
    assert Ownership(tmp_path / "none", tmp_path / "r", {}).sweep_sessions() == 0


def test_report_records_are_still_freed(tmp_path: Path) -> None:
    records = OwnerRecords(tmp_path)
    records.bind("a.report.md", BOB.key)
    records.forget("a.report.md")
    assert records.bind("a.report.md", ANN.key) == ANN.key
    assert not (records.root / "retired").exists()


def _race(args: tuple[str, str]) -> str:
    folder, key = args
    records = OwnerRecords(Path(folder) / "uploads", retire=True)
    if key == "sweep":
        return str(records.sweep(Path(folder) / "uploads"))
    return records.bind("s-old", key)


def test_a_retirement_racing_binds_never_frees_the_id(tmp_path: Path) -> None:
    for round_ in range(5):
        folder = tmp_path / f"r{round_}"
        (folder / "uploads").mkdir(parents=True)
        OwnerRecords(folder / "uploads", retire=True).bind("s-old", BOB.key)
        keys = ["sweep", *(f"customer:C1{n:04d}" for n in range(7))]
        with ProcessPoolExecutor(4, mp_context=multiprocessing.get_context("fork")) as pool:
            got = list(pool.map(_race, [(str(folder), k) for k in keys]))
        assert got[0] == "1"
        # each bind saw the old owner (before the retirement) or no owner at all
        assert set(got[1:]) <= {BOB.key, RETIRED}, got
        records = OwnerRecords(folder / "uploads", retire=True)
        assert records.owner("s-old") is None
        assert records.bind("s-old", "customer:C09999") == RETIRED


def test_the_service_retires_ended_sessions_when_it_starts(
    ui_settings: Settings, tmp_path: Path
) -> None:
    own = _sessions(tmp_path, "s-ended")
    for path in (own.uploads / "s-ended").iterdir():
        path.unlink()
    (own.uploads / "s-ended").rmdir()
    with TestClient(_app(ui_settings, own.uploads)):
        assert own.sessions.owner("s-ended") is None
        assert own.sessions.bind("s-ended", ANN.key) == RETIRED
