"""Nothing a file contains can exhaust the server: base_state.json is capped and kept
apart, event counts are capped, JSON arrays stream, and inputs that used to be skipped
are refused."""

from __future__ import annotations

import json
import zipfile

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from eventviewer.models import Conversation, ConversationState, Event

from .conftest import fixture_folder, message, refused, run_import

pytestmark = pytest.mark.django_db


# -- base_state.json ----------------------------------------------------------------


def test_a_base_state_over_its_cap_is_refused_naming_the_file_and_setting(folder, settings):
    settings.EVENTVIEWER_MAX_BASE_STATE_BYTES = 1000
    path = folder([message("m1", None, "hi")], base_state={"padding": "x" * 2000})
    (line,) = refused(path)
    assert f"{path}/base_state.json:" in line and "(EVENTVIEWER_MAX_BASE_STATE_BYTES)" in line


def test_a_zip_of_huge_base_states_is_refused_without_reading_them(tmp_path, settings):
    # Three 40 MiB states compress to a few KB: each is refused by its claimed size.
    settings.EVENTVIEWER_MAX_BASE_STATE_BYTES = 1024 * 1024
    archive = tmp_path / "states.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for n in range(3):
            cid = f"{n:032x}"
            z.writestr(f"{cid}/base_state.json", b'{"x": "' + b"a" * (40 * 1024 * 1024) + b'"}')
            z.writestr(f"{cid}/events/event-00000-m1.json", json.dumps(message("m1", None, "hi")))
    lines = refused(archive)
    assert len(lines) == 3 and all("base_state.json: 41,943,049 bytes, over the limit" in line for line in lines)


def test_base_state_is_stored_apart_and_served_only_as_a_download(client, open_site):
    folder = fixture_folder("simple")
    run_import(folder)
    conversation = Conversation.objects.get()
    raw = (folder / "base_state.json").read_bytes().strip()
    assert ConversationState.objects.get(conversation=conversation).raw == raw
    response = client.get(f"{conversation.get_absolute_url()}base_state.json")
    assert response.status_code == 200 and response.content == raw
    assert "attachment" in response["Content-Disposition"]
    head = conversation.head.event_id
    urls = [
        "/",
        conversation.get_absolute_url(),
        f"{conversation.get_absolute_url()}?leaf={head}",
        f"{conversation.get_absolute_url()}events/{head}/",
        f"{conversation.get_absolute_url()}diagram.svg",
        "/api/conversations/",
        f"/api/conversations/{conversation.conversation_id}/path/",
    ]
    for url in urls:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        # The API's list asks only whether one exists (for base_state_url), never for its bytes.
        read = [q for q in queries if "eventviewer_conversationstate" in q["sql"].lower() and "packed" in q["sql"]]
        assert not read, url


def test_a_reviewer_cannot_download_base_state(client, imported):
    conversation = imported("simple")
    share = conversation.share_links.create()
    assert client.get(f"{share.get_absolute_url()}base_state.json").status_code == 404


def test_a_conversation_without_base_state_has_no_download(client, open_site, folder):
    run_import(folder([message("m1", None, "hi")]))
    assert client.get(f"{Conversation.objects.get().get_absolute_url()}base_state.json").status_code == 404


# -- JSON arrays stream; events are capped -------------------------------------------


def test_a_json_array_keeps_each_item_as_the_bytes_it_was(tmp_path):
    items = ['{"id": "m1",  "kind": "MessageEvent", "big": 123456789012345678901234567890}', '{"id":"m2","kind":"X"}']
    path = tmp_path / "events.json"
    path.write_text("[\n  " + ",\n  ".join(items) + "\n]\n")
    run_import(path)
    assert [e.payload.raw for e in Event.objects.order_by("seq")] == items


def test_an_object_with_an_events_array_streams_too(tmp_path):
    path = tmp_path / "events.json"
    body = {"meta": {"x": [1, 2]}, "events": [message("m1", None, "hi")], "after": "yes"}
    path.write_text(json.dumps(body))
    assert run_import(path).startswith("imported ")
    assert Event.objects.count() == 1


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[]", "events.json: holds no events"),
        ("[\n]\n", "events.json: holds no events"),
        ('{"events": []}', "events.json: holds no events"),
        ('{"other": []}', "events.json: expected a JSON array of events"),
        ('[{"id": "m1", "kind": "X"} {"id": "m2"}]', "events.json[1]: malformed JSON (expected , or ] after an item)"),
        ('[{"id": "m1", "kind": "X"}, {"id": ', "events.json[1]: malformed JSON"),
        ('[{"id": "m1", "kind": "X"}] trailing', "events.json: malformed JSON (more after the end of the array)"),
        ("[1]", "events.json[0]: an event must be a JSON object, not a number"),
    ],
)
def test_a_bad_json_array_is_refused_naming_the_item(tmp_path, text, problem):
    path = tmp_path / "events.json"
    path.write_text(text)
    (line,) = refused(path)
    assert line.startswith(f"{tmp_path}/{problem}"), line


def test_an_empty_jsonl_file_is_refused(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text("\n\n")
    assert refused(path) == [f"{path}: holds no events"]


def test_an_array_item_over_the_event_cap_is_refused(tmp_path, settings):
    settings.EVENTVIEWER_MAX_EVENT_BYTES = 1000
    path = tmp_path / "events.json"
    path.write_text(json.dumps([message("m1", None, "hi"), message("m2", "m1", "x" * 5000)]))
    (line,) = refused(path)
    assert line == f"{path}[1]: an item over the limit of 1,000 bytes (EVENTVIEWER_MAX_EVENT_BYTES)"


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_more_events_than_the_cap_are_refused_before_any_is_imported(tmp_path, settings, suffix):
    settings.EVENTVIEWER_MAX_EVENTS = 3
    events = [message(f"m{n}", None if n == 0 else f"m{n - 1}", "hi") for n in range(4)]
    path = tmp_path / f"events{suffix}"
    text = json.dumps(events) if suffix == ".json" else "\n".join(json.dumps(e) for e in events)
    path.write_text(text)
    assert refused(path) == [f"{path}: more than 3 events, over the limit (EVENTVIEWER_MAX_EVENTS)"]
    path.write_text(json.dumps(events[:3]) if suffix == ".json" else "\n".join(json.dumps(e) for e in events[:3]))
    assert run_import(path).startswith("imported ")


def test_a_folder_with_more_events_than_the_cap_is_refused(folder, settings):
    settings.EVENTVIEWER_MAX_EVENTS = 2
    path = folder([message(f"m{n}", None if n == 0 else f"m{n - 1}", "hi") for n in range(3)])
    assert refused(path) == [f"{path}: 3 events, over the limit of 2 (EVENTVIEWER_MAX_EVENTS)"]


def test_a_big_json_array_is_read_in_bounded_memory(tmp_path):
    # 60 MB of events: parsed whole, the array alone would take several times that.
    import subprocess
    import sys

    path = tmp_path / "big.json"
    event = message("m0", None, "x" * 6000)
    with open(path, "w") as f:
        f.write("[")
        for n in range(10_000):
            event["id"], event["parent_id"] = f"m{n}", (f"m{n - 1}" if n else None)
            f.write(("," if n else "") + json.dumps(event))
        f.write("]")
    # The peak from /proc (VmHWM): ru_maxrss would carry this test process's own over exec.
    script = (
        "import sys, re; from django.conf import settings;"
        "from eventviewer.imports.sources import Limits, find_conversations;"
        "(s,) = find_conversations(__import__('pathlib').Path(sys.argv[1]), limits=Limits.of(settings));"
        "n = sum(1 for e in s.parsed() if e.light);"
        "peak = int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1));"
        "print(n, peak // 1024)"
    )
    env = {"DJANGO_SETTINGS_MODULE": "eventviewer.settings", "PATH": "/usr/bin:/bin"}
    wrapped = f"import django; django.setup(); {script}"
    done = subprocess.run([sys.executable, "-c", wrapped, str(path)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    count, peak_mb = map(int, done.stdout.split())
    assert count == 10_000 and peak_mb < 100, peak_mb


# -- what used to be skipped is refused ----------------------------------------------


def test_an_events_folder_that_is_a_symlink_is_refused(folder, tmp_path):
    path = folder([message("m1", None, "hi")], base_state={})
    elsewhere = tmp_path / "elsewhere"
    (path / "events").rename(elsewhere)
    (path / "events").symlink_to(elsewhere)
    (line,) = refused(path)
    assert line == f"{path}/events: a symbolic link; eventviewer never follows links"


def test_a_fifo_named_like_an_event_file_is_refused(folder):
    import os

    path = folder([message("m1", None, "hi")])
    os.mkfifo(path / "events" / "event-00001-m2.json")
    (line,) = refused(path)
    assert line == f"{path}/events/event-00001-m2.json: not a regular file"


def test_a_key_given_twice_is_refused_naming_it(folder, tmp_path):
    path = folder([message("m1", None, "hi")])
    (path / "events" / "event-00001-m2.json").write_text(
        '{"id": "m2", "kind": "MessageEvent", "parent_id": "m1", "source": "user", "source": "agent"}'
    )
    (line,) = refused(path)
    assert line == f'{path}/events/event-00001-m2.json: event m2: the key "source" appears twice in one object'
    jsonl = tmp_path / "dup.jsonl"
    jsonl.write_text('{"id": "m1", "kind": "X", "n": {"a": 1, "b": 2, "a": 1}}\n')
    assert refused(jsonl) == [f'{jsonl}:1: event m1: the key "a" appears twice in one object']


def test_a_key_given_twice_behind_escaped_colons_is_still_found(tmp_path):
    # The fast test counts colons; an escaped colon (\u003a) would cancel a dropped key's.
    jsonl = tmp_path / "dup.jsonl"
    jsonl.write_text('{"id": "m1", "kind": "X", "t": "\\u003a", "k": 1, "k": 2}\n')
    assert refused(jsonl) == [f'{jsonl}:1: event m1: the key "k" appears twice in one object']


def test_escaped_colons_without_repeated_keys_import(tmp_path):
    jsonl = tmp_path / "ok.jsonl"
    jsonl.write_text('{"id": "m1", "kind": "X", "t": "a\\u003ab:c"}\n')
    assert run_import(jsonl).startswith("imported ")


# -- re-imports compare exactly ------------------------------------------------------


@pytest.mark.parametrize(
    "changed",
    [
        '{"id": "m1", "kind": "X", "n": 123456789012345678901234567891}',
        '{"id": "m1", "kind": "X", "n": 123456789012345678901234567890, "extra": null}',
        '{"id": "m1", "kind": "X", "n": 123456789012345678901234567890.5}',
    ],
)
def test_a_changed_number_on_reimport_is_refused(tmp_path, changed):
    path = tmp_path / "events.jsonl"
    path.write_text('{"id": "m1", "kind": "X", "n": 123456789012345678901234567890}\n')
    run_import(path)
    path.write_text(changed + "\n")
    (line,) = refused(path)
    assert "its content differs from the copy imported before" in line


def test_the_same_events_laid_out_differently_are_unchanged(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"id": "m1", "kind": "X", "n": 123456789012345678901234567890, "f": 1.5, "b": true}\n')
    run_import(path)
    path.write_text('{"b":true,"f":1.50,"n":123456789012345678901234567890,"kind":"X","id":"m1"}\n')
    assert run_import(path).startswith("unchanged ")


def test_true_is_not_one(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"id": "m1", "kind": "X", "b": true}\n')
    run_import(path)
    path.write_text('{"id": "m1", "kind": "X", "b": 1}\n')
    assert "its content differs" in refused(path)[0]


def test_the_import_form_without_a_file_is_refused(client, open_site):
    response = client.post("/import/", {})
    assert response.status_code == 400
    assert "Choose at least one file to import." in response.content.decode()
