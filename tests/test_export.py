"""Exports: the SDK zip that imports again to the same events, a branch as its events,
as the model's messages and as a Markdown review; downloads under share links too."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from eventviewer.imports.importer import import_paths
from eventviewer.models import Conversation, ShareLink, unpack
from eventviewer.views.exports import stored_base_state

from .conftest import FIXTURES, SCENARIOS, SET_A2, action, message, observation
from .trajectory.sdk import CONVERSATIONS

pytestmark = pytest.mark.django_db

ALL_SCENARIOS = sorted([*SCENARIOS, *SET_A2])


def body(response) -> bytes:
    assert response.streaming, "downloads stream"
    return b"".join(response.streaming_content)


def import_root(path: Path, label: str | None = None) -> list[Conversation]:
    return [r.conversation for r in import_paths([(path, label or path.name)]) if r.conversation.parent_id is None]


def snapshot() -> dict:
    """Everything an import stores of each conversation, sub-agents included."""
    found = {}
    for c in Conversation.objects.select_related("parent", "head"):
        rows = c.events.order_by("seq").values_list(
            "seq", "event_id", "parent_ref", "depth", "kind", "digest", "effect", "payload__packed"
        )
        found[c.conversation_id] = {
            "parent": c.parent.conversation_id if c.parent else None,
            "parent_call_id": c.parent_call_id,
            "head": c.head.event_id if c.head else None,
            "base_state": stored_base_state(c),
            "usages": sorted(c.usages.values_list("response_id", "prompt_tokens", "cost")),
            "events": [(*row[:-1], unpack(row[-1])) for row in rows],
        }
    return found


@pytest.mark.parametrize("scenario", ALL_SCENARIOS)
def test_the_sdk_zip_holds_the_files_verbatim_and_imports_again_to_identical_events(
    scenario, client, open_site, tmp_path
):
    roots = import_root(FIXTURES / scenario, scenario)
    before = snapshot()
    zips = []
    for root in roots:
        response = client.get(f"/c/{root.conversation_id}/export.zip")
        assert response.status_code == 200 and response["Content-Type"] == "application/zip"
        assert response["Content-Disposition"] == f'attachment; filename="{root.conversation_id}.zip"'
        path = tmp_path / f"{root.conversation_id}.zip"
        path.write_bytes(body(response))
        zips.append(path)
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                original = FIXTURES / scenario / name
                assert archive.read(name) == original.read_bytes().strip(), name
            on_disk = {
                str(p.relative_to(FIXTURES / scenario))
                for p in (FIXTURES / scenario / root.conversation_id).rglob("*.json")
            }
            assert set(archive.namelist()) == on_disk

    Conversation.objects.all().delete()
    for path in zips:
        import_paths([(path, path.name)])
    assert snapshot() == before


def test_a_conversation_imported_from_a_jsonl_file_exports_with_its_head(client, open_site, tmp_path):
    lines = [message("m1", None, "hi"), action("a1", "m1", "c1"), observation("o1", "a1", "a1", "c1")]
    source = tmp_path / "run.jsonl"
    source.write_text("\n".join(json.dumps(e) for e in lines) + "\n")
    (conversation,) = import_root(source)
    before = snapshot()
    archive = zipfile.ZipFile(io.BytesIO(body(client.get(f"/c/{conversation.conversation_id}/export.zip"))))
    state = json.loads(archive.read(f"{conversation.conversation_id}/base_state.json"))
    assert state["leaf_event_id"] == "o1"
    Conversation.objects.all().delete()
    path = tmp_path / "back.zip"
    path.write_bytes(archive.fp.getvalue())
    import_paths([(path, "back.zip")])
    after = snapshot()
    assert [e[1:6] for e in after[conversation.conversation_id]["events"]] == [
        e[1:6] for e in before[conversation.conversation_id]["events"]
    ]


def test_an_event_id_that_cannot_be_a_file_name_is_a_400_before_anything_is_sent(client, open_site, tmp_path):
    source = tmp_path / "run.jsonl"
    source.write_text(json.dumps(message("m/1", None, "hi")) + "\n")
    (conversation,) = import_root(source)
    response = client.get(f"/c/{conversation.conversation_id}/export.zip")
    assert response.status_code == 400 and "cannot be a file name" in response.content.decode()


def fixture_files(relpath: str) -> dict[str, bytes]:
    return {p.name.split("-", 2)[2][:-5]: p.read_bytes() for p in (FIXTURES / relpath / "events").glob("event-*.json")}


@pytest.mark.parametrize("relpath", CONVERSATIONS)
def test_a_branch_as_events_is_its_verbatim_events_root_first(relpath, client, open_site):
    import_paths([(FIXTURES / relpath.split("/")[0], "x")])
    answers = sdk_answers_for(relpath)
    conversation_id = Path(relpath).name
    response = client.get(f"/c/{conversation_id}/export/", {"leaf": answers["leaf"], "format": "events"})
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"].startswith(f'attachment; filename="{conversation_id}-')
    assert response["Content-Disposition"].endswith('.events.json"')
    raw = body(response)
    files = fixture_files(relpath)
    assert raw == b"[\n" + b",\n".join(files[e] for e in answers["path"]) + b"\n]\n"
    assert [e["id"] for e in json.loads(raw)] == answers["path"]


def sdk_answers_for(relpath: str) -> dict:
    return json.loads((FIXTURES / "sdk-answers" / f"{Path(relpath).name}.json").read_text())


def as_sdk(chat: list[dict]) -> list[tuple]:
    """Chat messages as the SDK's answers list them: role, and the calls made or answered."""
    return [(m["role"], [c["id"] for c in m.get("tool_calls") or []], m.get("tool_call_id", "")) for m in chat]


@pytest.mark.parametrize("relpath", CONVERSATIONS)
@pytest.mark.parametrize("view", ["full", "model"])
def test_a_branch_as_messages_is_what_the_sdk_sends_in_the_chat_format(relpath, view, client, open_site):
    import_paths([(FIXTURES / relpath.split("/")[0], "x")])
    answers = sdk_answers_for(relpath)
    params = {"leaf": answers["leaf"], "format": "messages", "view": view}
    chat = json.loads(body(client.get(f"/c/{Path(relpath).name}/export/", params)))
    expected = answers["path_messages"] if view == "full" else answers["view_messages"]
    assert as_sdk(chat) == [
        (m["role"], m.get("tool_call_ids") or [], "") if m["role"] != "tool" else (m["role"], [], as_call(m))
        for m in expected
    ]
    for message_ in chat:
        assert set(message_) <= {"role", "content", "tool_calls", "tool_call_id"}
        for call in message_.get("tool_calls") or []:
            assert call["type"] == "function" and isinstance(call["function"]["arguments"], str)
            json.loads(call["function"]["arguments"])


def as_call(message_: dict) -> str:
    return message_.get("tool_call_id") or message_["tool_call_ids"][0]


def test_messages_carry_the_texts_the_calls_and_the_results(client, open_site):
    (conversation,) = import_root(FIXTURES / "simple", "simple")
    chat = json.loads(body(client.get(f"/c/{conversation.conversation_id}/export/", {"format": "messages"})))
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert chat[0]["content"].startswith("<SOUL>")
    call = chat[2]["tool_calls"][0]
    assert call["function"]["name"] == "terminal"
    assert json.loads(call["function"]["arguments"])["command"] == "echo 'hello world' > hello.txt && ls -1"
    assert chat[3] == {"role": "tool", "tool_call_id": call["id"], "content": "hello.txt"}


def plain(token) -> str:
    """What an inline token reads as: its text, escapes undone, without markup."""
    return "".join(c.content for c in token.children if c.type in ("text", "code_inline"))


HOSTILE = "<script>alert(1)</script> ``` **bold** [x](javascript:alert(1))\n~~~\n````"


def test_the_markdown_review_is_markdown_in_which_event_text_stays_text(client, open_site, folder):
    events = [
        message("m1", None, HOSTILE),
        action("a1", "m1", "c1", action={"kind": "TerminalAction", "command": HOSTILE}),
        observation("o1", "a1", "a1", "c1", text=HOSTILE),
        action("a2", "o1", "c2", response="r2"),
    ]
    (conversation,) = import_root(folder(events, {"leaf_event_id": "a2"}))
    response = client.get(f"/c/{conversation.conversation_id}/export/", {"format": "markdown"})
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response["Content-Disposition"].endswith('.md"')
    text = body(response).decode()
    tokens = MarkdownIt("commonmark").parse(text)
    assert not [t for t in tokens if t.type.startswith("html")]
    assert plain(tokens[1]) == conversation.title and tokens[0].tag == "h1"
    fences = [t.content for t in tokens if t.type == "fence"]
    assert HOSTILE + "\n" in fences  # the message, whole
    assert f"$ {HOSTILE}\n" in fences  # the command
    assert any(HOSTILE in f for f in fences)  # the output
    html = MarkdownIt("commonmark", {"html": True}).render(text)
    assert "<script>" not in html and 'href="javascript' not in html
    headings = [plain(t) for i, t in enumerate(tokens) if t.type == "inline" and tokens[i - 1].tag == "h3"]
    assert [h.split(" (")[0] for h in headings] == [
        "1. User",
        "2. Assistant · 1 tool call",
        "3. Assistant · 1 tool call",
    ]
    assert "pending: a2 has no result on this branch" in text
    assert f"http://testserver/c/{conversation.conversation_id}/?leaf=a2" in text
    assert f"([link](http://testserver/c/{conversation.conversation_id}/?leaf=a2&at=m1#event-m1))" in text


def test_the_markdown_review_shortens_long_outputs(client, open_site, folder):
    long_output = "\n".join(f"line {i}" for i in range(500))
    events = [
        message("m1", None, "go"),
        action("a1", "m1", "c1"),
        observation("o1", "a1", "a1", "c1", text=long_output),
    ]
    (conversation,) = import_root(folder(events))
    text = body(client.get(f"/c/{conversation.conversation_id}/export/", {"format": "markdown"})).decode()
    assert "line 29\n" in text and "line 30\n" not in text and "… (470 more lines in the conversation)" in text


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ({"format": "pdf"}, 400),
        ({}, 400),
        ({"format": "events", "leaf": "nope"}, 404),
        ({"format": "events", "view": "x"}, 400),
    ],
)
def test_a_bad_export_query_is_refused_with_its_reason(query, status, client, open_site, imported):
    conversation = imported("simple")
    response = client.get(f"/c/{conversation.conversation_id}/export/", query)
    assert response.status_code == status


def test_exports_need_a_login_when_the_site_does(client, imported):
    conversation = imported("simple")
    assert client.get(f"/c/{conversation.conversation_id}/export.zip").status_code == 302
    assert client.get(f"/c/{conversation.conversation_id}/export/?format=events").status_code == 302


def test_a_share_link_exports_its_conversation_and_sub_agents_and_nothing_else(client, imported):
    (parent,) = import_root(FIXTURES / "subagent", "subagent")
    child = parent.subagents.first()
    share = ShareLink.objects.create(conversation=parent)
    base = f"/s/{share.token}/"
    archive = zipfile.ZipFile(io.BytesIO(body(client.get(f"{base}export.zip"))))
    assert f"{parent.conversation_id}/subagents/{child.conversation_id}/base_state.json" in archive.namelist()
    assert client.get(f"{base}export/", {"format": "events"}).status_code == 200
    review = body(client.get(f"{base}sub/{child.conversation_id}/export/", {"format": "markdown"})).decode()
    assert f"(http://testserver{base}sub/{child.conversation_id}/?leaf=" in review and "/c/" not in review
    sub_zip = client.get(f"{base}sub/{child.conversation_id}/export.zip")
    assert f"{child.conversation_id}/base_state.json" in zipfile.ZipFile(io.BytesIO(body(sub_zip))).namelist()
    other = imported("simple")
    assert client.get(f"{base}sub/{other.conversation_id}/export.zip").status_code == 404
    other_leaf = other.skeleton["head"]
    assert client.get(f"{base}export/", {"format": "events", "leaf": other_leaf}).status_code == 404
    share.revoked_at = share.created_at
    share.save()
    assert client.get(f"{base}export.zip").status_code == 410


def test_the_conversation_page_offers_the_exports(client, open_site, imported):
    conversation = imported("simple")
    html = client.get(conversation.get_absolute_url()).content.decode()
    leaf = conversation.skeleton["head"]
    for fmt in ("markdown", "messages", "events"):
        assert f"/c/{conversation.conversation_id}/export/?leaf={leaf}&amp;format={fmt}" in html
    assert f'href="/c/{conversation.conversation_id}/export.zip" download' in html


def test_a_branch_of_user_messages_streams_as_messages_in_bounded_memory(client, open_site, folder, tmp_path):
    """Adjacent user messages are one chat message: 1,200 of 5 KB (6 MB) are written out
    as they are read, never held whole (it held the branch's JSON and the message at once)."""
    import tracemalloc

    texts = [f"{i:05d} " + "words of a long message " * 200 for i in range(1_200)]
    events = [message(f"m{i}", f"m{i - 1}" if i else None, text) for i, text in enumerate(texts)]
    (conversation,) = import_root(folder(events, {"leaf_event_id": "m1199"}))
    response = client.get(f"/c/{conversation.conversation_id}/export/", {"format": "messages"})
    assert response.streaming
    written = tmp_path / "messages.json"
    tracemalloc.start()
    try:
        with written.open("wb") as out:  # on disk, so that only the export's own memory is traced
            for chunk in response.streaming_content:
                out.write(chunk)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    chat = json.loads(written.read_bytes())
    assert [m["role"] for m in chat] == ["user"]
    assert [p["text"] for p in chat[0]["content"]] == texts
    assert peak < 2_000_000, f"peak {peak:,} bytes while writing 6 MB of messages"


def test_an_output_under_fields_the_cards_do_not_know_is_shown_and_exported(client, open_site, folder):
    from .conftest import action, message, observation

    result = observation("o1", "a1", "a1", "c1")
    output = {"command": "pytest -q", "stdout": "3 passed in 0.2s", "stderr": "warning: slow", "exit_code": 0}
    result["observation"] = output
    empty = observation("o2", "a2", "a2", "c2")
    empty["observation"] = {"command": "true", "exit_code": 0}
    events = [
        message("m1", None, "run the tests"),
        action("a1", "m1", "c1", action={"kind": "TerminalAction", "command": "pytest -q"}),
        result,
        action("a2", "o1", "c2", response="r2", action={"kind": "TerminalAction", "command": "true"}),
        empty,
    ]
    conversation = import_paths([(folder(events, {"leaf_event_id": "o2"}), "t")])[0].conversation
    page = client.get(conversation.get_absolute_url()).content.decode()
    card = page[page.index('id="event-o1"') : page.index('id="event-a2"')]
    assert "3 passed in 0.2s" in card and "warning: slow" in card and "(no output)" not in card
    assert "(no output)" in page[page.index('id="event-o2"') :]  # none: it says so
    export = f"/c/{conversation.conversation_id}/export/"
    chat = json.loads(body(client.get(export, {"leaf": "o2", "format": "messages"})))
    (tool,) = [m for m in chat if m.get("tool_call_id") == "c1"]
    assert "3 passed in 0.2s" in str(tool["content"]) and "warning: slow" in str(tool["content"])
    review = body(client.get(export, {"leaf": "o2", "format": "markdown"})).decode()
    assert "3 passed in 0.2s" in review and "warning: slow" in review
