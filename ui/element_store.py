"""Where the chat history keeps its elements (charts, heatmaps, report files, uploads), so a
resumed thread shows them again: a storage client for Chainlit's SQLAlchemy data layer
(``SQLAlchemyDataLayer(storage_provider=...)``) on a local folder, and the one page route that
reads a kept element back to the person who owns it.

Why a storage client of our own: Chainlit's data layer stores an element's bytes only through a
``chainlit.data.storage_clients.base.BaseStorageClient``, and the clients Chainlit ships (S3,
Google Cloud Storage, Azure Blob / Data Lake) all need a cloud account. This app runs on one
machine, often with no network, beside a SQLite or PostgreSQL history; a folder on that machine
(``ORCH_UI_FILES``, default beside the user file) is the storage it has. The client implements
Chainlit's own interface, so Chainlit's data layer does the rest: it writes the element's row
with the key this client returns and asks :meth:`LocalStorageClient.get_read_url` for a URL when
a thread is opened again. An S3 bucket (Chainlit's ``S3StorageClient``) can replace it with no
other change.

Who reads a kept element: Chainlit names each key ``<thread author's user id>/<element id>/
<name>``. The route answers only a signed-in person whose Chainlit user id is that first part
(anyone else gets 404, as for a missing file), so one customer's charts and reports cannot be
read by another, even with the link. Files are stored under the SHA-256 of their key (no name a
person chose reaches the disk), and only JSON and raster images are served as what they are;
anything else is a download (``application/octet-stream``, ``attachment``), so an uploaded page
or script never runs in the app's origin.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Annotated, Any

from chainlit.auth import get_current_user
from chainlit.data.storage_clients.base import BaseStorageClient
from chainlit.server import app as chainlit_app
from fastapi import Depends, HTTPException
from fastapi.responses import FileResponse

#: The route a kept element is read from (``ROUTE + "/" + digest``).
ROUTE = "/history/files"
#: Types served as they are; every other file is a download.
INLINE_TYPES = frozenset(("application/json", "image/png", "image/jpeg", "image/webp"))
_DIGEST = re.compile(r"[0-9a-f]{64}")


def digest(object_key: str) -> str:
    """The file name (SHA-256, hex) under which ``object_key`` is stored."""
    return hashlib.sha256(object_key.encode("utf-8")).hexdigest()


class LocalStorageClient(BaseStorageClient):
    """Chainlit's storage-client interface on a local folder (see the module docstring).

    Each element is two files in ``root``: ``<digest>`` (its bytes) and ``<digest>.json``
    (``{"owner": user id, "mime": type}``).
    """

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def _write(self, object_key: str, data: bytes | str, mime: str) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        name = digest(object_key)
        body = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        meta = {"owner": object_key.split("/", 1)[0], "mime": mime}
        for path, content in ((name, body), (name + ".json", json.dumps(meta).encode())):
            tmp = self.root / (path + ".part")
            tmp.write_bytes(content)
            os.replace(tmp, self.root / path)

    async def upload_file(
        self,
        object_key: str,
        data: bytes | str,
        mime: str = "application/octet-stream",
        overwrite: bool = True,
        content_disposition: str | None = None,
    ) -> dict[str, Any]:
        """Keep ``data`` under ``object_key``: ``{"object_key", "url"}``; ``{}`` when the
        folder cannot be written (Chainlit's data layer then logs it and keeps no row)."""
        try:
            await asyncio.to_thread(self._write, object_key, data, mime)
        except OSError:
            return {}
        return {"object_key": object_key, "url": await self.get_read_url(object_key)}

    async def delete_file(self, object_key: str) -> bool:
        """Remove a kept element; True when it was there."""
        name = digest(object_key)
        found = False
        for path in (self.root / name, self.root / (name + ".json")):
            try:
                path.unlink()
                found = True
            except FileNotFoundError:
                pass
        return found

    async def get_read_url(self, object_key: str) -> str:
        """The page's URL of a kept element (relative to the app)."""
        return f"{ROUTE}/{digest(object_key)}"

    async def close(self) -> None:
        """Nothing to close (files are opened per call)."""

    def read(self, name: str, user_id: str | None) -> tuple[Path, str]:
        """The kept file ``name`` (a digest) and its type, for ``user_id``.

        Raises:
            FileNotFoundError: no such file, a malformed name, or one another user owns.
        """
        if not _DIGEST.fullmatch(name) or not user_id:
            raise FileNotFoundError(name)
        meta = json.loads((self.root / (name + ".json")).read_text(encoding="utf-8"))
        if meta.get("owner") != user_id or meta.get("owner") == "unknown":
            raise FileNotFoundError(name)
        return self.root / name, str(meta.get("mime") or "application/octet-stream")


def install_route(store: LocalStorageClient) -> None:
    """Serve ``store``'s files at :data:`ROUTE` on Chainlit's server, to their owner only
    (before Chainlit's catch-all page route, which would answer every GET otherwise)."""

    async def kept_element(
        name: str, user: Annotated[Any, Depends(get_current_user)]
    ) -> FileResponse:
        try:
            path, mime = store.read(name, getattr(user, "id", None))
        except (OSError, ValueError):
            raise HTTPException(status_code=404, detail="not found") from None
        headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "private"}
        if mime in INLINE_TYPES:
            return FileResponse(path, media_type=mime, headers=headers)
        headers["Content-Disposition"] = "attachment"
        return FileResponse(path, media_type="application/octet-stream", headers=headers)

    route_first(ROUTE + "/{name}", kept_element, "GET")


def route_first(path: str, endpoint: Any, method: str) -> None:
    """Add ``method path`` to Chainlit's server ahead of its own routes (its catch-all page
    route, or its route of the same path), once: a module reloaded while it runs finds it."""
    routes = chainlit_app.router.routes
    name = endpoint.__name__
    if any(getattr(getattr(r, "endpoint", None), "__name__", "") == name for r in routes):
        return
    chainlit_app.add_api_route(path, endpoint, methods=[method])
    routes.insert(0, routes.pop())
