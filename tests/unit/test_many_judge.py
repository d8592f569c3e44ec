"""router_ask_many's judge: reading the agreement score however the judge writes it, and what the
judge is shown."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.ask_many.judge import agreement, judge_prompt, render_conversation
from colibri_router.conversation import Message, Text, Thinking, ToolCall, ToolResult
from colibri_router.schema import RouterCallResult, ToolCallOut

# Text a judge may write before its score, without the word "agreement" in it.
prose = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200).filter(
    lambda text: "agreement" not in text.lower()
)


@given(
    prose,
    st.floats(min_value=0, max_value=1),
    st.sampled_from(["AGREEMENT: {}", "Agreement = {}", "**Agreement:** {}", "agreement score: {}"]),
)
def test_a_fraction_on_its_own_line_is_read_and_the_line_dropped(body: str, score: float, form: str) -> None:
    value, content = agreement(f"{body}\n{form.format(f'{score:.2f}')}")
    assert value == pytest.approx(round(score, 2), abs=0.001)
    assert content == body.strip()


@given(st.integers(min_value=0, max_value=100))
def test_percentages_and_marks_become_fractions(n: int) -> None:
    assert agreement(f"Agreement: {n}%")[0] == pytest.approx(n / 100)
    assert agreement(f"Agreement: {n}/100")[0] == pytest.approx(n / 100)
    if n <= 10:
        assert agreement(f"Agreement: {n}/10")[0] == pytest.approx(n / 10)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("AGREEMENT: 0.8", 0.8),
        ("agreement: 0,65", 0.65),
        ("Agreement: 8", 0.8),  # a bare mark up to 10 is out of 10
        ("Agreement: 75", 0.75),  # above 10, out of 100
        ("Agreement: 4/5", 0.8),
        ("The agreement is low.\nAGREEMENT: 0.2", 0.2),  # the last one counts
        ("AGREEMENT: 0.9 overall, high", 0.9),
        ("Agreement: 250", None),  # out of any scale: no score
        ("They agree on most points.", None),
        ("", None),
    ],
)
def test_scores_judges_write(text: str, expected: float | None) -> None:
    assert agreement(text)[0] == expected


@given(prose)
def test_without_a_score_the_whole_answer_stays(text: str) -> None:
    assert agreement(text) == (None, text)


def test_a_score_inside_a_sentence_keeps_the_sentence() -> None:
    value, content = agreement("A and B differ; agreement: 0.4 at best.\nC is right.")
    assert value == 0.4
    assert content == "A and B differ; agreement: 0.4 at best.\nC is right."


def _answer(text: str, calls: list[ToolCallOut] | None = None) -> RouterCallResult:
    return RouterCallResult.model_construct(content=text, tool_calls=calls or [])


def test_the_judge_reads_the_conversation_and_labelled_answers_without_reasoning() -> None:
    conversation = (
        Message("user", (Text("Read a.sql"),)),
        Message("assistant", (Thinking("private musing"), ToolCall("c1", "read", {"path": "a.sql"}))),
        Message("user", (ToolResult("c1", "DROP TABLE users;"),)),
    )
    prompt = judge_prompt(
        conversation,
        "Be careful.",
        [_answer("Unsafe."), _answer("", [ToolCallOut(id="x", name="backup", input={"db": "main"})])],
        None,
    )
    assert "The models' system prompt:\nBe careful." in prompt
    assert '[assistant calls read] {"path":"a.sql"}' in prompt
    assert "[tool result] DROP TABLE users;" in prompt
    assert "private musing" not in prompt
    assert "Answer A:\nUnsafe." in prompt
    assert 'Answer B:\n[calls backup] {"db":"main"}' in prompt
    assert prompt.rstrip().endswith("(1: they say the same, 0: they contradict each other).")


def test_a_single_prompt_is_shown_as_written() -> None:
    assert render_conversation((Message("user", (Text("Is it safe?"),)),)) == "Is it safe?"
