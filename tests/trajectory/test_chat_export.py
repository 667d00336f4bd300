"""The model's messages written as a stream: the same bytes as the whole message, written
before its events have all been read."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from eventviewer.trajectory import kinds
from eventviewer.trajectory.export import chat_message, chat_message_json
from eventviewer.trajectory.projection import Message

TEXT = st.text(max_size=8)
CONTENT = st.one_of(
    TEXT,
    st.lists(
        st.one_of(
            st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}),
            st.fixed_dictionaries({"type": st.just("image"), "image_urls": st.lists(TEXT, max_size=2)}),
            st.just(7),
        ),
        max_size=3,
    ),
)
USER_EVENT = st.one_of(
    st.builds(lambda c: {"kind": kinds.MESSAGE, "llm_message": {"role": "user", "content": c}}, CONTENT),
    st.builds(lambda t: {"kind": kinds.CONDENSATION_SUMMARY, "summary": t}, TEXT),
)
CALL = st.builds(
    lambda thought, name, arguments: {
        "kind": kinds.ACTION,
        "thought": [{"type": "text", "text": thought}],
        "tool_call": {"id": name + "-id", "name": name, "arguments": arguments},
    },
    TEXT,
    TEXT,
    st.one_of(TEXT, st.dictionaries(TEXT, TEXT, max_size=2)),
)


def written(message: Message, events: list[dict[str, Any]]) -> bytes:
    return b"".join(chat_message_json(message, iter(events)))


@settings(max_examples=200, deadline=None)
@given(st.lists(USER_EVENT, max_size=5), st.sampled_from(["user", "system"]))
def test_a_user_message_streams_as_the_same_json(events, role):
    message = Message(role, kinds.MESSAGE, [str(i) for i in range(len(events))])
    assert written(message, events) == orjson.dumps(chat_message(message, events))


@settings(max_examples=200, deadline=None)
@given(st.lists(CALL, max_size=4))
def test_a_response_of_calls_streams_as_the_same_json(events):
    message = Message("assistant", kinds.ACTION, [str(i) for i in range(len(events))])
    assert written(message, events) == orjson.dumps(chat_message(message, events))


def test_a_tool_result_streams_as_the_same_json():
    event = {"kind": kinds.OBSERVATION, "observation": {"content": [{"type": "text", "text": "done"}]}}
    message = Message("tool", kinds.OBSERVATION, ["o1"], tool_call_id="c1")
    assert written(message, [event]) == orjson.dumps(chat_message(message, [event]))


def test_a_long_run_of_user_messages_is_written_before_it_is_read_whole():
    read = 0

    def events() -> Iterator[dict[str, Any]]:
        nonlocal read
        for i in range(10_000):
            read += 1
            yield {"kind": kinds.MESSAGE, "llm_message": {"content": f"message {i}"}}

    message = Message("user", kinds.MESSAGE, [str(i) for i in range(10_000)])
    chunks = chat_message_json(message, events())
    first = next(chunks)
    assert first.startswith(b'{"role":"user","content":[{"type":"text","text":"message 0"}')
    assert read <= 3
    content = orjson.loads(first + b"".join(chunks))["content"]
    assert [part["text"] for part in content] == [f"message {i}" for i in range(10_000)]
