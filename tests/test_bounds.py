"""Nothing a file contains can exhaust the server: base_state.json is capped and kept
apart, event counts are capped, JSON arrays stream, and inputs that used to be skipped
are refused."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from eventviewer.models import Conversation, ConversationState, Event

from .conftest import fixture_folder, message

pytestmark = pytest.mark.django_db


def run_import(*paths) -> str:
    out = io.StringIO()
    call_command("import_conversation", *[str(p) for p in paths], stdout=out)
    return out.getvalue()


def refused(*paths) -> list[str]:
    """An import that must fail: its problem lines; nothing was written."""
    before = (Conversation.objects.count(), Event.objects.count())
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_conversation", *[str(p) for p in paths], stdout=io.StringIO(), stderr=err)
    assert (Conversation.objects.count(), Event.objects.count()) == before
    return err.getvalue().splitlines()


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
        assert not [q for q in queries if "conversationstate" in q["sql"].lower()], url


def test_a_reviewer_cannot_download_base_state(client, imported):
    conversation = imported("simple")
    share = conversation.share_links.create()
    assert client.get(f"{share.get_absolute_url()}base_state.json").status_code == 404


def test_a_conversation_without_base_state_has_no_download(client, open_site, folder):
    run_import(folder([message("m1", None, "hi")]))
    assert client.get(f"{Conversation.objects.get().get_absolute_url()}base_state.json").status_code == 404
