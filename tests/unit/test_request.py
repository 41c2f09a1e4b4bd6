import pytest
from pydantic import ValidationError

from orchestrator import Attachment, Request
from orchestrator.request import MAX_TEXT_CHARS


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_empty_or_whitespace_text_is_rejected_with_a_clear_message(text: str) -> None:
    with pytest.raises(ValidationError, match="empty or whitespace"):
        Request(text=text)


def test_text_over_the_limit_is_rejected() -> None:
    with pytest.raises(ValidationError, match="at most"):
        Request(text="a" * (MAX_TEXT_CHARS + 1))


def test_lone_surrogates_are_rejected() -> None:
    with pytest.raises(ValidationError, match=r"(?i)unicode"):
        Request(text="ok \ud800 broken")


def test_ids_are_unique_and_attachments_know_their_extension() -> None:
    a, b = Request(text="hi"), Request(text="hi")
    assert a.id != b.id
    assert Attachment(filename="Q3 Sales.XLSX").extension == "xlsx"
    assert Attachment(filename="notes").extension == ""
