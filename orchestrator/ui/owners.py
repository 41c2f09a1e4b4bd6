"""Who owns what the UI service holds: conversations, upload sessions and report files.

* A **thread** belongs to the customer of its first turn (the LangGraph checkpoint keeps that
  customer, and the order store's owner table binds it atomically across processes). A new
  conversation starts only on a fresh, random thread id (:data:`FRESH_THREAD`: a version-4
  UUID, what Chainlit makes); on any other id a customer may only continue a conversation of
  their own. So an id someone could guess (``t1``, a batch's thread column, an id typed into
  ``orchestrator chat --thread``) reads the same whether someone used it or not, and cannot be
  taken ahead of its owner; a random id that is taken cannot be guessed.
* An **upload session** (Chainlit keeps a session's uploads in ``<uploads>/<session id>/``)
  belongs to the first caller who names one of its files; Chainlit lets a browser choose its
  session id, so after a restart of the app another person could claim an old one. When its
  folder is gone (Chainlit deletes it when the session ends), its record is *retired* at the
  service's next start (:meth:`Ownership.sweep_sessions`): the id goes into a compact list of
  retired ids and can never be bound again, by anyone, so removing a record never frees an id.
* A **report file** belongs to the caller whose turn wrote it.

Sessions and report files are recorded on disk beside what they guard (:class:`OwnerRecords`),
so they still belong to their owner alone after the service restarts (tester11 D; ui12). A
report file's record lives as long as the file: when the file is deleted (by hand, a clean-up
job), its record goes at the service's next start (:meth:`Ownership.sweep_reports`) or the next
request for it, whichever is first (ui13; until then records were never removed).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from orchestrator.exceptions import ThreadOwnerError
from orchestrator.ui.auth import Caller, RefusedError

logger = logging.getLogger(__name__)

#: A thread id a conversation may start on: a version-4 UUID as ``str(uuid.uuid4())`` writes
#: it (Chainlit's thread ids). Any other id only continues a conversation of the caller's own.
FRESH_THREAD = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
#: What a customer reads for a thread that is not theirs, or that they may not start: word for
#: word the same for another customer's thread and an id no one used (tester11 G).
NOT_YOURS = "no such conversation of yours; start a new conversation"
#: The name of a record file of :class:`OwnerRecords` (the SHA-256 of the name it guards).
_RECORD = re.compile(r"[0-9a-f]{64}")
#: What :meth:`OwnerRecords.bind` answers for a retired name: no caller's key (``Caller.key``
#: is ``<role>:<id>``), so no one owns it.
RETIRED = "retired"


class OwnerRecords:
    """The owner of each name (a session id, a report file name), one record file per name in
    ``<folder>/.owners/``, written once: the first owner stays.

    Each record is made whole in a temporary file and linked into place (``os.link`` fails when
    the record exists), so two processes binding one name at once get one owner, and a reader
    never sees half a record. A name is stored by its SHA-256, so any name is a safe file name.

    With ``retire``, a record removed (:meth:`forget`, :meth:`sweep`) is first appended to a
    list of retired names (``.owners/retired/<first two hex digits>``, one line of 64 hex
    digits each, about 65 bytes instead of a file per name), and a name on it is never bound
    again: :meth:`bind` answers :data:`RETIRED`.
    """

    def __init__(self, folder: Path, *, retire: bool = False) -> None:
        self.root = Path(folder) / ".owners"
        self.retire = retire

    def _record(self, name: str) -> Path:
        return self.root / hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()

    def owner(self, name: str) -> str | None:
        """The owner key recorded for ``name`` (``Caller.key``), or None when none is."""
        try:
            return self._record(name).read_text(encoding="utf-8") or None
        except OSError:
            return None

    def bind(self, name: str, key: str) -> str:
        """Record ``key`` as the owner of ``name`` unless one is recorded; the owner's key.

        Raises:
            OSError: The record folder cannot be written (a full disk, no permission).
        """
        if (known := self.owner(name)) is not None:
            return self._unless_retired(name, known)
        self.root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=self.root, delete=False, suffix=".tmp") as f:
            f.write(key)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(f.name, self._record(name))
            made = True
        except FileExistsError:  # another process bound it first: its owner counts
            made = False
        finally:
            os.unlink(f.name)
        # checked after the link: a retirement lists the name before it unlinks the record,
        # so a record linked after that unlink always finds the name listed
        if made and self.retire and self._retired(self._record(name).name):
            self._drop(self._record(name))
            return RETIRED
        known = self.owner(name)
        # None: the record that beat ours was removed since (retired): look again
        return self._unless_retired(name, known) if known is not None else self.bind(name, key)

    def _unless_retired(self, name: str, known: str) -> str:
        """``known`` (the owner read for ``name``), or :data:`RETIRED` when ``name`` is listed
        as retired: a record read after the listing may be another binder's, linked after the
        retirement and about to be dropped by it, so its key is no owner (a race test saw a
        bind answer such a key)."""
        return RETIRED if self.retire and self._retired(self._record(name).name) else known

    def forget(self, name: str) -> None:
        """Remove the record of ``name``, if any (retired first, with ``retire``).

        Raises:
            OSError: The record folder cannot be written.
        """
        if self._record(name).exists():
            self._remove(self._record(name))

    def _remove(self, record: Path) -> None:
        """Remove ``record``; with ``retire``, list its name as retired first (fsynced)."""
        if self.retire:
            shard = self.root / "retired" / record.name[:2]
            shard.parent.mkdir(exist_ok=True)
            with shard.open("a", encoding="ascii") as f:
                f.write(record.name + "\n")
                f.flush()
                os.fsync(f.fileno())
        self._drop(record)

    @staticmethod
    def _drop(record: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            record.unlink()

    def _retired(self, digest: str) -> bool:
        """Whether the name of SHA-256 ``digest`` is retired."""
        try:
            listed = (self.root / "retired" / digest[:2]).read_text(encoding="ascii")
        except FileNotFoundError:
            return False
        return digest in listed.split()

    def sweep(self, folder: Path) -> int:
        """Remove the records of names that are no longer files or folders in ``folder``
        (what they guarded was deleted); the number removed.

        The records are listed before the folder, and a record is written only after what it
        guards exists (:meth:`Ownership.keep_files`), so a record bound while this runs is
        kept. Only record files are touched (names of 64 hex digits).

        Raises:
            OSError: ``folder`` or the record folder cannot be read or written.
        """
        if not self.root.is_dir():
            return 0
        records = [p for p in self.root.iterdir() if _RECORD.fullmatch(p.name)]
        alive = {self._record(p.name).name for p in Path(folder).iterdir()}
        gone = [p for p in records if p.name not in alive]
        for path in gone:
            self._remove(path)
        return len(gone)


class Ownership:
    """The owner checks of :class:`~orchestrator.ui.service.UiService`.

    Args:
        uploads: The UI's upload folder (``<uploads>/<session id>/<file>``).
        reports: The report folder (``Settings.report_dir``).
        state: The service's opened state (``cs``: the customer-service workflow, ``orders``:
            its order store), filled when the app opens.
    """

    def __init__(self, uploads: Path, reports: Path, state: dict[str, Any]) -> None:
        self.uploads = Path(uploads)
        self.reports = Path(reports)
        self.state = state
        #: thread id → customer id of its first turn (the checkpoint keeps it across restarts)
        self.threads: dict[str, str | None] = {}
        self.sessions = OwnerRecords(self.uploads, retire=True)
        self.files = OwnerRecords(self.reports)

    async def owner(self, thread_id: str) -> str | None:
        """The customer ``thread_id`` belongs to (that of its first turn), or None for a thread
        with no customer turn yet."""
        if thread_id in self.threads:
            return self.threads[thread_id]
        if self.state.get("cs") is None:  # no route holds threads: no thread has an owner
            return None
        snapshot = await self.state["cs"].graph.aget_state(
            {"configurable": {"thread_id": thread_id}}
        )
        owner = (snapshot.values or {}).get("customer_id")
        if owner is None and (orders := self.state.get("orders")) is not None:
            rows = [h for h in orders.handoffs(None) if h["thread_id"] == thread_id]
            owner = rows[0]["customer_id"] if rows else None
        if owner is not None:
            self.threads[thread_id] = owner
        return owner

    async def may_use_thread(self, caller: Caller, thread_id: str, *, write: bool) -> None:
        """Refuse (404 :data:`NOT_YOURS`) a customer on another customer's thread, reading one
        no one used, or starting one on an id that is not fresh (:data:`FRESH_THREAD`): all
        read the same; and (403) an operator writing to a customer's thread. A customer's turn
        binds a new thread to them in the order store (atomic across processes: two first
        turns at once get one owner; a refusal there is recorded, ``cs_thread_refusals``).

        Raises:
            RefusedError: 404 or 403 as above.
        """
        customer = caller.role == "customer"
        fresh = FRESH_THREAD.fullmatch(thread_id) is not None
        if customer and write and not fresh and not caller.owns(await self.owner(thread_id)):
            raise RefusedError(404, NOT_YOURS)  # a guessable id: only its customer continues
        orders: Any = self.state.get("orders")
        if customer and write and orders is not None:
            try:
                await asyncio.to_thread(
                    orders.coordination.bind_thread, thread_id, caller.customer_id, "ui"
                )
            except ThreadOwnerError as exc:
                raise RefusedError(404, NOT_YOURS) from exc
        owner = await self.owner(thread_id)
        if customer and not caller.owns(owner) and (owner or not write):
            raise RefusedError(404, NOT_YOURS)  # another's, or (reading) no one's: the same
        if owner is not None and caller.role == "operator" and write:
            raise RefusedError(403, "this conversation belongs to another account")
        if customer and write:
            self.threads.setdefault(thread_id, caller.customer_id)

    def owns_upload(self, caller: Caller, path: Path) -> bool:
        """Whether ``path`` (resolved, under the upload folder) lies in the caller's own session
        folder: the token's session (``sid``), bound to the caller the first time one of its
        files is named (tester11 D; a session someone else named first is not theirs)."""
        parts = path.relative_to(self.uploads.resolve()).parts
        if caller.session is None or len(parts) < 2 or parts[0] != caller.session:
            return False
        return self.sessions.bind(caller.session, caller.key) == caller.key

    def keep_files(self, done: dict[str, Any], caller: Caller) -> None:
        """Record ``caller`` as the owner of the report files a ``done`` event names."""
        for key in ("markdown", "xlsx"):
            value = (done.get("result") or {}).get(key)
            if isinstance(value, str) and value:
                with contextlib.suppress(OSError):  # unrecorded: served to no one
                    self.files.bind(Path(value).name, caller.key)

    def report_file(self, caller: Caller, name: str) -> Path | None:
        """The report file ``name`` when a turn of ``caller``'s wrote it, else None. The record
        of the caller's file that was deleted is removed with it."""
        root = self.reports.resolve()
        path = (root / name).resolve()
        if self.files.owner(name) != caller.key or root not in path.parents:
            return None
        if not path.is_file():
            with contextlib.suppress(OSError):  # kept: the next start's sweep removes it
                self.files.forget(name)
            return None
        return path

    def sweep_reports(self) -> int:
        """Remove the owner records of report files that were deleted (:meth:`OwnerRecords.
        sweep`); the number removed, 0 when the report folder does not exist or cannot be
        read (logged)."""
        return _swept(self.files, self.reports, "report")

    def sweep_sessions(self) -> int:
        """Retire the owner records of upload sessions whose folder is gone (Chainlit deleted
        it when the session ended): each id can never be bound again. The number retired, 0
        when the upload folder does not exist or cannot be read (logged)."""
        return _swept(self.sessions, self.uploads, "upload session")


def _swept(records: OwnerRecords, folder: Path, what: str) -> int:
    """:meth:`OwnerRecords.sweep` of ``folder``; 0 when it is missing or unreadable (logged)."""
    if not folder.is_dir():
        return 0
    try:
        return records.sweep(folder)
    except OSError:
        logger.warning("the %s owner records cannot be swept", what, exc_info=True)
        return 0
