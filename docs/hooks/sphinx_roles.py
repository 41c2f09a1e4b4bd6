"""MkDocs hook: Sphinx cross-reference roles in docstrings read as code in the API reference.

The library's docstrings are Google style, with Sphinx roles for cross-references
(``:class:`~orchestrator.core.Workflow```), which ``help()`` and IDEs show as they are.
mkdocstrings renders a role as the role's name followed by the code
(``:class:<code>~orchestrator.core.Workflow</code>``); this hook keeps the code and drops the
role, and a leading ``~`` keeps only the last dotted part, as Sphinx does.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(
    r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj|const):<code>(~?)([^<]*)</code>"
)


def _code(match: re.Match[str]) -> str:
    short, target = match.group(1), match.group(2)
    return f"<code>{target.rsplit('.', 1)[-1] if short else target}</code>"


def on_page_content(html: str, **kwargs: Any) -> str:
    """Rewrite each rendered role in a page's HTML (MkDocs event: after Markdown)."""
    return _ROLE.sub(_code, html)
