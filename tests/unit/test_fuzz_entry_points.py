"""Fuzzing the public entry points (issue 18, part 4) with ``hypothesis``.

Each test feeds arbitrary and hostile input to one entry point and checks that it either
answers (with the invariants its docstring promises) or raises an error of the documented
tree (:mod:`orchestrator.exceptions`; :class:`pydantic.ValidationError` for :class:`Request`),
never anything else:

* :class:`Request` and :meth:`RuleClassifier.classify_text` (never raises for bad text);
* the moderation normaliser (:func:`normalize`) and matcher (:meth:`Matcher.scan`);
* the routing-trace decoder (:func:`decode_routed_experts`), :class:`ExpertRoutingTrace`
  and the telemetry count codec (:mod:`orchestrator.telemetry.codec`);
* the data-file loaders: :func:`orchestrator.datafiles.load_toml`, the classifier's rules and
  calibration, the moderation lexicon, policy, mention cues and risk scorer, each on mutated
  copies of the real shipped file.

Findings in files owned by other workstreams are kept as ``xfail(strict=True)`` tests with a
fixed reproducer: they fail the suite the day the bug is fixed (so the mark is removed then),
and the fuzz test itself skips exactly that known input, so it cannot hide a new regression.

Profiles and example counts: :mod:`tests.unit.fuzz_profiles`.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pydantic
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.core import default_calibration_path, default_rules_path
from orchestrator.classifier.loader import load_calibration, load_rules
from orchestrator.datafiles import load_toml
from orchestrator.exceptions import DataFileError, OrchestratorError, TelemetryError, UserError
from orchestrator.request import MAX_TEXT_CHARS, Request
from orchestrator.routes import FALLBACK
from orchestrator.telemetry import codec
from serving.architecture import MoEArchitecture
from serving.engine_capture import decode_routed_experts, encode_routed_experts
from serving.errors import ExpertRoutingDecodeError
from serving.expert_routing import ExpertRoutingSource, ExpertRoutingTrace
from tests.unit.fuzz_profiles import EXAMPLES, FUZZ, report_examples, scaled
from workflows.content_moderation.lexicon import DEFAULT_LEXICON_DIR, load_lexicon
from workflows.content_moderation.matcher import Lexicon
from workflows.content_moderation.mention import DEFAULT_MENTION_PATH, load_mention_rules
from workflows.content_moderation.normalize import normalize
from workflows.content_moderation.policy import DEFAULT_POLICY_PATH, load_policy
from workflows.content_moderation.scorer import DEFAULT_SCORER_PATH, load_scorer

#: Strings that have broken text handling somewhere before.
HOSTILE = [
    "",
    " ",
    "\x00",
    "\ud800",  # lone surrogate
    "a\udfffb",
    "\u202e",  # right-to-left override
    "\u200b\u200d\ufeff",
    "&#0;&#x110000;&amp;&#99999999;",
    "Ｆ\u200bυсk",
    "f\u0336u\u0336c\u0336k",
    "🏳️‍🌈" * 3,
    '=HYPERLINK("http://evil","x")',
    "<script>alert(1)</script>",
    "](javascript:alert(1))",
    "'; DROP TABLE orders; --",
    "../../../etc/passwd",
    "傻逼" * 50,
    "a" * 5000,
    "\r\n" * 100,
    "İıſ\u0130\u0131",
    "𝐟𝐮𝐜𝐤",
]
TEXT = st.one_of(
    st.text(), st.sampled_from(HOSTILE), st.text(alphabet=st.characters(codec="utf-8"))
)
ANY_TEXT = st.one_of(
    TEXT, st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF))
)


@pytest.fixture(scope="module", autouse=True)
def _summary() -> Iterator[None]:
    yield
    report_examples(__name__)


def _count(name: str) -> None:
    EXAMPLES[f"{__name__}::{name}"] += 1


# ------------------------------------------------------------------------------ Request


@settings(parent=FUZZ)
@given(
    text=ANY_TEXT,
    id_=st.one_of(st.none(), ANY_TEXT),
    channel=st.one_of(st.none(), ANY_TEXT),
    thread=st.one_of(st.none(), ANY_TEXT),
    customer=st.one_of(st.none(), ANY_TEXT),
    metadata=st.dictionaries(ANY_TEXT, st.one_of(ANY_TEXT, st.integers(), st.none()), max_size=3),
    attachments=st.lists(
        st.fixed_dictionaries(
            {"filename": ANY_TEXT}, optional={"path": ANY_TEXT, "media_type": ANY_TEXT}
        ),
        max_size=3,
    ),
)
@example(  # found by the fuzz-deep profile: a lone surrogate in a metadata value got through
    text="0",
    id_=None,
    channel=None,
    thread=None,
    customer=None,
    metadata={"": "\ud800"},
    attachments=[],
)
def test_request_validates_or_raises_validation_error(
    text: str,
    id_: str | None,
    channel: str | None,
    thread: str | None,
    customer: str | None,
    metadata: dict[str, Any],
    attachments: list[dict[str, str]],
) -> None:
    _count("Request")
    kwargs: dict[str, Any] = {"text": text, "channel": channel, "thread_id": thread}
    kwargs |= {"customer_id": customer, "metadata": metadata, "attachments": attachments}
    if id_ is not None:
        kwargs["id"] = id_
    try:
        request = Request(**kwargs)
    except pydantic.ValidationError as exc:
        assert exc.errors(), exc  # names the field and the rule
        return
    assert request.text.strip() and len(request.text) <= MAX_TEXT_CHARS
    request.text.encode("utf-8")  # valid Unicode: no lone surrogate got through
    for attachment in request.attachments:
        assert isinstance(attachment.extension, str)
    request.model_dump_json()  # serialisable as telemetry stores it


# ------------------------------------------------------------------------------ classifier


@pytest.fixture(scope="module")
def classifier() -> RuleClassifier:
    return RuleClassifier(reload_interval=None)


@settings(parent=FUZZ)
@given(
    text=st.one_of(ANY_TEXT, st.binary(max_size=300)),
    attachments=st.lists(ANY_TEXT, max_size=3),
    channel=st.one_of(st.none(), ANY_TEXT),
)
def test_classify_text_never_raises(
    classifier: RuleClassifier, text: str | bytes, attachments: list[str], channel: str | None
) -> None:
    _count("classify_text")
    result = classifier.classify_text(text, attachments=attachments, channel=channel)
    assert result.route in {spec.name for spec in classifier.route_specs} | {FALLBACK}
    assert 0.0 <= result.confidence <= 1.0


# ------------------------------------------------------------------------------ moderation


@pytest.fixture(scope="module")
def matcher():  # type: ignore[no-untyped-def]
    return Lexicon(reload_interval=None).matcher()


@settings(parent=FUZZ)
@given(text=ANY_TEXT)
def test_normaliser_maps_every_character_back(text: str) -> None:
    _count("normalize")
    norm = normalize(text)
    assert len(norm.starts) == len(norm.ends) == len(norm.text)
    if len(norm.text):
        assert int(norm.starts.min()) >= 0 and int(norm.ends.max()) <= len(text)
        assert bool(np.all(norm.starts < norm.ends))
        start, end = norm.span(0, len(norm.text))
        assert 0 <= start <= end <= len(text)


@settings(parent=FUZZ)
@given(text=st.one_of(ANY_TEXT, st.lists(st.sampled_from(HOSTILE), max_size=6).map(" ".join)))
def test_matcher_scan_hits_lie_inside_the_text(matcher, text: str) -> None:  # type: ignore[no-untyped-def]
    _count("Matcher.scan")
    result = matcher.scan(text)
    for hit in result.hits:
        assert 0 <= hit.start < hit.end <= len(text), hit
    result.severity  # noqa: B018 - computed from the hits; must not raise


# ------------------------------------------------------------------------------ routing trace

ARCH = MoEArchitecture(
    model_type="ernie4_5_moe", num_hidden_layers=4, moe_layers=(1, 2, 3), num_experts=16, top_k=2
)


@st.composite
def routed_payload(draw: st.DrawFn) -> tuple[dict[str, Any], int, int]:
    """A choice with a ``routed_experts`` field: sometimes right, mostly subtly wrong."""
    prompt = draw(st.integers(0, 6))
    completion = draw(st.integers(0, 6))
    rows = draw(st.sampled_from([prompt + max(completion - 1, 0), draw(st.integers(0, 12))]))
    layers = draw(st.sampled_from([ARCH.num_hidden_layers, len(ARCH.moe_layers), 2, 0]))
    top_k = draw(st.sampled_from([ARCH.top_k, 1, 3]))
    dtype = draw(st.sampled_from(["u1", "i2", "i8", "f4", "b1", "u2"]))
    ids = draw(
        hnp.arrays(
            dtype,
            draw(st.sampled_from([(rows, layers, top_k), (rows, layers), (rows,), ()])),
            elements=None
            if dtype[0] in "fb"
            else st.integers(-3, 40).filter(
                lambda v, d=dtype: np.iinfo(d).min <= v <= np.iinfo(d).max
            ),
        )
    )
    how = draw(st.sampled_from(["npy", "list", "garbage", "other"]))
    if how == "npy":
        value: Any = encode_routed_experts(ids)
    elif how == "list":
        value = ids.tolist()
        if draw(st.booleans()) and isinstance(value, list) and value:
            value = [*value, [0]]  # ragged
    elif how == "garbage":
        value = draw(
            st.one_of(
                st.text(max_size=40),
                st.binary(max_size=40).map(lambda b: base64.b64encode(b).decode()),
            )
        )
    else:
        value = draw(st.one_of(st.integers(), st.none(), st.dictionaries(st.text(), st.integers())))
    key = draw(st.sampled_from(["routed_experts", "prompt_routed_experts"]))
    return {key: value}, prompt, completion


@settings(parent=FUZZ)
@given(case=routed_payload())
def test_decode_routed_experts_raises_only_its_decode_error(
    case: tuple[dict[str, Any], int, int],
) -> None:
    _count("decode_routed_experts")
    choice, prompt, completion = case
    try:
        trace = decode_routed_experts(
            choice, prompt_tokens=prompt, completion_tokens=completion, arch=ARCH
        )
    except ExpertRoutingDecodeError:
        return  # findings F1, F2, F4 (fixed): anything else escaping here fails the test
    assert trace.source in (ExpertRoutingSource.ENGINE, ExpertRoutingSource.UNAVAILABLE)
    if trace.expert_ids is not None:
        counts = trace.expert_counts()
        assert counts.shape == (len(ARCH.moe_layers), ARCH.num_experts)
        assert (counts.sum(axis=1) == trace.routed_tokens * ARCH.top_k).all()


@pytest.mark.parametrize(
    ("payload", "prompt_tokens"),
    [
        (encode_routed_experts(np.full((1, 3, 2), 40, dtype=np.uint8)), 1),  # 40 >= 16 experts
        ([[[0, 1], [2, 3], [4, 5]], [0]], 2),  # a ragged list
        ("", 1),  # an empty string
    ],
    ids=["out-of-range-expert-id", "ragged-list", "empty-string"],
)
def test_finding_a_bad_routed_experts_payload_is_a_decode_error(
    payload: object, prompt_tokens: int
) -> None:
    with pytest.raises(ExpertRoutingDecodeError):
        decode_routed_experts(
            {"routed_experts": payload},
            prompt_tokens=prompt_tokens,
            completion_tokens=1,
            arch=ARCH,
        )


@settings(parent=FUZZ)
@given(
    prompt=st.integers(0, 5),
    completion=st.integers(0, 5),
    shape=st.tuples(st.integers(0, 6), st.integers(0, 4), st.integers(0, 3)),
    ids=st.integers(-2, 20),
)
def test_expert_routing_trace_checks_its_shapes(
    prompt: int, completion: int, shape: tuple[int, int, int], ids: int
) -> None:
    _count("ExpertRoutingTrace")
    array = np.full(shape, ids, dtype=np.int16)
    try:
        trace = ExpertRoutingTrace(
            source=ExpertRoutingSource.REPLAY,
            moe_layers=(1, 2, 3)[: shape[1]] if shape[1] <= 3 else (1, 2, 3, 4),
            num_experts=16,
            top_k=shape[2],
            prompt_tokens=prompt,
            completion_tokens=completion,
            expert_ids=array,
        )
    except pydantic.ValidationError:
        return
    counts = trace.expert_counts()
    assert (counts >= 0).all() and int(counts.sum()) == array.size
    for layer, expert, share in trace.top_experts(3):
        assert layer in trace.moe_layers and 0 <= expert < 16 and 0 <= share <= 1


# ------------------------------------------------------------------------------ count codec


@settings(parent=FUZZ)
@given(
    counts=hnp.arrays(
        np.int64,
        st.tuples(st.integers(0, 5), st.integers(0, 9)),
        elements=st.one_of(st.integers(0, 300), st.integers(0, 2**31 - 1), st.integers(-5, 2**40)),
    )
)
def test_count_codec_round_trips_or_refuses(counts: np.ndarray) -> None:
    _count("codec.encode_counts")
    try:
        blob = codec.encode_counts(counts)
    except UserError:
        assert counts.size and (counts.min() < 0 or counts.max() >= 2**31)
        return
    decoded = codec.decode_counts_blob(blob, *counts.shape)
    assert decoded.dtype == np.int32 and np.array_equal(decoded, counts)
    (stacked,) = codec.stack_counts([blob], *counts.shape) if counts.size else (decoded,)
    assert np.array_equal(stacked, counts)


@settings(parent=FUZZ)
@given(
    blob=st.binary(max_size=80),
    layers=st.integers(0, 6),
    experts=st.integers(0, 9),
    shape=st.lists(st.integers(0, 5), max_size=3).map(tuple),
)
def test_count_codec_decoders_raise_only_telemetry_errors(
    blob: bytes, layers: int, experts: int, shape: tuple[int, ...]
) -> None:
    _count("codec.decode")
    for decode in (
        lambda: codec.decode_counts_blob(blob, layers, experts),
        lambda: codec.stack_counts([blob, blob[:1]], layers, experts),
        lambda: codec.decode_int64(blob, shape),
        lambda: codec.decode_float64(blob, shape),
    ):
        try:
            decode()
        except TelemetryError as exc:
            assert "bytes" in str(exc), exc  # says what size it got
    confidence = codec.decode_layer_confidence(blob, layers)
    assert confidence is None or confidence.shape == (layers,)


# ------------------------------------------------------------------------------ data files


def _mutate_text(draw: st.DrawFn, text: str) -> str:
    lines = text.splitlines(keepends=True) or [""]
    how = draw(st.sampled_from(["drop", "dup", "cut", "replace", "flip", "value"]))
    i = draw(st.integers(0, len(lines) - 1))
    if how == "drop":
        del lines[i]
    elif how == "dup":
        lines.insert(i, lines[i])
    elif how == "cut":
        lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    elif how == "replace":
        lines[i] = draw(st.sampled_from([*HOSTILE, "[x]\n", "[[rule]]\n", "a = [\n", 'k = """\n']))
    elif how == "flip":
        line = lines[i]
        if line:
            at = draw(st.integers(0, len(line) - 1))
            lines[i] = line[:at] + draw(st.characters()) + line[at + 1 :]
    else:  # a value of another type: string <-> number <-> array <-> table
        line = lines[i]
        if "=" in line:
            key = line.split("=", 1)[0]
            value = draw(
                st.sampled_from(
                    [
                        '""',
                        "-1",
                        "1e309",
                        "nan",
                        "inf",
                        "[]",
                        "{}",
                        "true",
                        '"(a+)+$"',
                        '"["',
                        "9999999999999999999999",
                        '"\\u0000"',
                        '[1, "a"]',
                        "0.0",
                    ]
                )
            )
            lines[i] = f"{key}= {value}\n"
    return "".join(lines)


@st.composite
def mutated_text(draw: st.DrawFn, path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    for _ in range(draw(st.integers(1, 3))):
        text = _mutate_text(draw, text)
    return text


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return path


LOADERS = {
    "rules": (default_rules_path(), lambda p: load_rules(p)),
    "calibration": (default_calibration_path(), lambda p: load_calibration(p)),
    "policy": (DEFAULT_POLICY_PATH, lambda p: load_policy(p)),
    "mention": (DEFAULT_MENTION_PATH, lambda p: load_mention_rules(p)),
}


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_data_file_loaders_raise_only_data_file_errors(name: str) -> None:
    source, load = LOADERS[name]

    @settings(parent=scaled(30))
    @given(text=mutated_text(source))
    def run(text: str) -> None:
        _count(f"loader.{name}")
        with tempfile.TemporaryDirectory() as folder:
            path = _write(Path(folder), source.name, text)
            try:
                load(path)
            except DataFileError as exc:
                assert str(exc).startswith(str(path)), exc  # file:line: reason

    run()


@settings(parent=scaled(20))
@given(
    victim=st.sampled_from(sorted(p.name for p in Path(DEFAULT_LEXICON_DIR).glob("*.toml"))),
    data=st.data(),
)
def test_lexicon_loader_raises_only_lexicon_errors(victim: str, data: st.DataObject) -> None:
    _count("loader.lexicon")
    source = Path(DEFAULT_LEXICON_DIR)
    text = data.draw(mutated_text(source / victim))
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "lexicon"
        shutil.copytree(source, copy)
        _write(copy, victim, text)
        try:
            load_lexicon(copy)
        except DataFileError as exc:
            assert str(copy) in str(exc), exc


@settings(parent=FUZZ)
@given(text=st.one_of(st.text(max_size=200), st.sampled_from(HOSTILE)))
def test_load_toml_on_arbitrary_text(text: str) -> None:
    _count("datafiles.load_toml")

    class Model(pydantic.BaseModel):
        name: str
        size: int = 0

    with tempfile.TemporaryDirectory() as folder:
        path = _write(Path(folder), "x.toml", text)
        try:
            loaded = load_toml(path, Model)
        except DataFileError as exc:
            assert exc.path == path and exc.reason
            if exc.line is not None:
                # tomllib counts a lone "\r" as a line break too, like str.splitlines
                assert 1 <= exc.line <= len(text.splitlines()) + 1, (exc.line, text)
            return
    assert isinstance(loaded.value.name, str)


def _npz_mutations(draw: st.DrawFn, raw: bytes) -> bytes:
    how = draw(st.sampled_from(["truncate", "flip", "drop"]))
    if how == "truncate":
        return raw[: draw(st.integers(0, len(raw) - 1))]
    if how == "flip":
        mutable = bytearray(raw)
        for _ in range(draw(st.integers(1, 6))):
            mutable[draw(st.integers(0, len(raw) - 1))] = draw(st.integers(0, 255))
        return bytes(mutable)
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        entries = [(info.filename, archive.read(info)) for info in archive.infolist()]
    drop = draw(st.integers(0, len(entries) - 1))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for i, (name, body) in enumerate(entries):
            if i != drop:
                archive.writestr(name, body)
    return out.getvalue()


@settings(parent=scaled(20))
@given(data=st.data())
def test_scorer_loader_raises_only_scorer_errors(data: st.DataObject) -> None:
    _count("loader.scorer")
    raw = Path(DEFAULT_SCORER_PATH).read_bytes()
    damaged = _npz_mutations(data.draw, raw)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "risk_scorer.npz"
        path.write_bytes(damaged)
        with contextlib.suppress(DataFileError):
            load_scorer(path)
        # any other exception fails the test (finding F3, fixed: load_scorer wraps them)


def test_finding_truncated_scorer_file_is_a_scorer_error(tmp_path: Path) -> None:
    raw = Path(DEFAULT_SCORER_PATH).read_bytes()
    path = tmp_path / "risk_scorer.npz"
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(DataFileError):
        load_scorer(path)


def test_every_error_the_fuzz_tests_accept_is_in_the_documented_tree() -> None:
    """The errors accepted above are part of :mod:`orchestrator.exceptions`' tree."""
    for error in (DataFileError, TelemetryError, ExpertRoutingDecodeError, UserError):
        assert issubclass(error, OrchestratorError)
    assert json.dumps(sorted(LOADERS))  # the loaders fuzzed, by name
