"""Reading raw HTTP/1.1 requests in the tests' own socket servers (servers that drop or die
mid-answer, which an ordinary HTTP server library will not do on purpose)."""

from __future__ import annotations

import asyncio


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """``(head, body)`` of the next request on ``reader``: the head up to and including the
    blank line, the body as long as its ``Content-Length`` (empty without one).

    Raises ``asyncio.IncompleteReadError`` when the peer closes mid-request.
    """
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    body = await reader.readexactly(length) if length else b""
    return head, body
