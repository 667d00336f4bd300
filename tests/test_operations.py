"""Operators can undo and follow: deleting conversations (page, admin, command), the
Import page's background progress, and the login lockout."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from eventviewer.imports.importer import import_paths
from eventviewer.models import Conversation, ConversationState, Event, EventPayload, ShareLink, Upload

from .conftest import fixture_folder, message, text_of

ROOT_DIR = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.django_db


def chain(n: int) -> list[dict]:
    events = [message("m0", None, "start")]
    for i in range(1, n):
        events.append(message(f"m{i}", f"m{i - 1}", f"step {i}"))
    return events


# -- deletion -------------------------------------------------------------------


def test_deleting_removes_events_payloads_state_and_share_links_in_batches(imported):
    conversation = imported("branching-retries")
    other = imported("simple")
    conversation.share_links.create()
    assert ConversationState.objects.filter(conversation=conversation).exists()
    events = conversation.event_count
    assert conversation.delete_in_batches(batch=3) == events
    assert not Conversation.objects.filter(pk=conversation.pk).exists()
    assert not Event.objects.filter(conversation_id=conversation.pk).exists()
    assert EventPayload.objects.count() == other.event_count == Event.objects.count()
    assert not ShareLink.objects.exists() and ConversationState.objects.count() == 1


def test_a_child_stored_before_its_parent_is_deleted_too(tmp_path):
    # Not SDK-made, but imported: a child whose parent comes later in the log.
    path = tmp_path / "late.jsonl"
    events = [message("m0", None, "a"), message("m2", "m1", "child first"), message("m1", "m0", "parent")]
    path.write_text("\n".join(json.dumps(e) for e in events))
    (result,) = import_paths([(path, "late.jsonl")])
    assert result.conversation.delete_in_batches(batch=1) == 3
    assert not Event.objects.exists()


def test_a_conversation_imported_after_one_was_deleted_shows_its_own_events(client, open_site, tmp_path):
    """Pages keep the cards they built; a new conversation may get the pks of a deleted
    one's events (SQLite hands them out again): it must show its own."""
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text("\n".join(json.dumps(e) for e in [message("a0", None, "the first conversation speaks")]))
    second.write_text("\n".join(json.dumps(e) for e in [message("b0", None, "the second conversation speaks")]))
    (old,) = import_paths([(first, "first.jsonl")])
    assert "the first conversation speaks" in client.get(old.conversation.get_absolute_url()).content.decode()
    reused = Event.objects.get(conversation=old.conversation).pk
    old.conversation.delete_in_batches()
    (new,) = import_paths([(second, "second.jsonl")])
    html = client.get(new.conversation.get_absolute_url()).content.decode()
    assert "the second conversation speaks" in html and "the first conversation speaks" not in html
    if Event.objects.get(conversation=new.conversation).pk != reused:
        pytest.skip("this database did not hand the pk out again")


def test_the_command_deletes_by_id_and_refuses_unknown_ids(imported):
    conversation = imported("simple")
    with pytest.raises(CommandError, match="no such conversation"):
        call_command("delete_conversation", conversation.conversation_id, "f" * 32)
    assert Conversation.objects.count() == 1
    out = io.StringIO()
    call_command("delete_conversation", str(conversation.conversation_id), stdout=out)
    assert out.getvalue() == f"deleted {conversation.conversation_id}: 6 events\n"
    assert not Conversation.objects.exists() and not Event.objects.exists()


def test_deleting_from_the_page_asks_first_then_hides_and_deletes(user_client, imported):
    conversation = imported("simple")
    page = user_client.get(conversation.get_absolute_url()).content.decode()
    url = f"{conversation.get_absolute_url()}delete/"
    assert f'href="{url}"' in page
    confirm = user_client.get(url)
    assert confirm.status_code == 200 and "Delete this conversation?" in confirm.content.decode()
    assert 'method="post"' in confirm.content.decode() and "6 events" in confirm.content.decode()
    assert Conversation.objects.count() == 1  # asking changes nothing
    response = user_client.post(url)
    assert response.status_code == 302 and response["Location"] == "/"
    assert not Conversation.objects.exists() and not Event.objects.exists()
    assert "Deleting" in user_client.get("/").content.decode()


def test_deleting_needs_a_login_and_a_post(client, open_site, imported):
    conversation = imported("simple")
    url = f"{conversation.get_absolute_url()}delete/"
    assert f'href="{url}"' not in client.get(conversation.get_absolute_url()).content.decode()
    assert client.get(url).status_code == 302  # to the login page
    assert client.post(url).status_code == 302
    assert Conversation.objects.count() == 1


def test_a_reviewer_cannot_delete(client, imported):
    conversation = imported("simple")
    share = conversation.share_links.create()
    assert "/delete/" not in client.get(share.get_absolute_url()).content.decode()
    assert client.post(f"{share.get_absolute_url()}delete/").status_code in (404, 405)


def test_a_conversation_being_deleted_is_hidden_everywhere(open_site, client, imported):
    conversation = imported("simple")
    share = conversation.share_links.create()
    Conversation.objects.filter(pk=conversation.pk).update(deleting=True)
    assert conversation.conversation_id not in client.get("/").content.decode()
    assert client.get(conversation.get_absolute_url()).status_code == 404
    assert client.get(share.get_absolute_url()).status_code == 404
    assert json.loads(client.get("/api/conversations/").content)["count"] == 0
    with pytest.raises(Exception, match="is being deleted"):
        import_paths([(fixture_folder("simple"), "simple")])


def test_the_admin_deletes_in_the_background_without_listing_every_event(admin_client, imported):
    conversation = imported("simple")
    url = f"/admin/eventviewer/conversation/{conversation.pk}/delete/"
    confirm = admin_client.get(url).content.decode()
    assert "6 events" in confirm and conversation.events.first().event_id not in confirm
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    assert not Conversation.objects.exists() and not Event.objects.exists()
    imported("simple")
    changelist = "/admin/eventviewer/conversation/"
    pks = [str(c.pk) for c in Conversation.objects.all()]
    response = admin_client.post(changelist, {"action": "delete_selected", "_selected_action": pks, "post": "yes"})
    assert response.status_code == 302 and not Conversation.objects.exists()


# -- the Import page in the background --------------------------------------------


def upload(client, tmp_path, name: str, text: str, **extra):
    path = tmp_path / name
    path.write_text(text)
    with open(path, "rb") as f:
        return client.post("/import/", {"files": f}, **extra)


def test_an_upload_answers_at_once_with_a_page_that_follows_it(client, open_site, tmp_path, settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}  # no worker yet
    response = upload(client, tmp_path, "run.jsonl", json.dumps(message("m1", None, "hi")))
    assert response.status_code == 302
    page = client.get(response["Location"])
    html = page.content.decode()
    assert "Uploaded. Waiting for the import to start" in html and 'hx-trigger="every 1s"' in html
    assert "worker" not in text_of(html, "import-status")  # how it runs is not the reader's business
    partial = client.get(response["Location"], headers={"HX-Request": "true"}).content.decode()
    assert "<html" not in partial and 'id="import-status"' in partial
    assert page["Vary"] and "HX-Request" in page["Vary"]
    (saved,) = Upload.objects.get().paths()
    assert saved[0].read_text() == json.dumps(message("m1", None, "hi")) and saved[1] == "run.jsonl"


def test_an_htmx_upload_is_redirected_by_htmx(client, open_site, tmp_path):
    response = upload(client, tmp_path, "run.jsonl", json.dumps(message("m1", None, "hi")), HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and response["HX-Redirect"].startswith("/import/")
    bad = client.post("/import/", {}, HTTP_HX_REQUEST="true")
    assert bad.status_code == 400 and "<html" not in bad.content.decode()
    assert "Choose at least one file" in bad.content.decode()


def test_the_result_says_new_and_unchanged_events_then_nothing_new(client, open_site, tmp_path):
    events = [message("m1", None, "hi"), message("m2", "m1", "again")]
    text = "\n".join(json.dumps(e) for e in events[:1])
    first = client.get(upload(client, tmp_path, "run.jsonl", text)["Location"]).content.decode()
    assert "1 new event, 0 unchanged" in first and "Nothing new" not in first
    more = "\n".join(json.dumps(e) for e in events)
    second = client.get(upload(client, tmp_path, "run.jsonl", more)["Location"]).content.decode()
    assert "1 new event, 1 unchanged" in second
    third = client.get(upload(client, tmp_path, "run.jsonl", more)["Location"]).content.decode()
    assert "nothing new" in third and "<b>Nothing new</b>" in third
    assert 'hx-trigger="every 1s"' not in third  # finished: no more polling


def test_a_refused_upload_shows_its_reasons_and_keeps_nothing(client, open_site, tmp_path):
    response = upload(client, tmp_path, "bad.jsonl", '{"id": "m1", "kind": "X", "k": 1, "k": 2}\n')
    html = client.get(response["Location"]).content.decode()
    assert "Nothing was imported" in html and "the key &quot;k&quot; appears twice" in html
    assert not Conversation.objects.exists()
    assert not Upload.objects.get().folder.exists()  # the files are gone once done


def test_a_running_import_shows_its_progress_and_a_silent_worker_is_stopped(client, open_site, settings):
    from django_tasks_db.models import DBTaskResult

    from eventviewer import tasks
    from eventviewer.imports.progress import Progress

    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    item = Upload.objects.create(names=["run.jsonl"])
    item.folder.mkdir(parents=True)
    result = tasks.import_upload.enqueue(str(item.id))
    Upload.objects.filter(pk=item.pk).update(task_id=str(result.id))
    DBTaskResult.objects.get(pk=result.id).claim("a-worker")
    progress = Progress(events_total=100, conversations_total=1, events=40, files=40, conversations=1)
    tasks.write_progress(item.folder, progress)
    html = client.get(item.get_absolute_url()).content.decode()
    assert "40 of 100 events" in html and "events/s" in html and 'hx-trigger="every 1s"' in html
    assert '<progress max="100" value="40" aria-label="Import">' in html and "40%" in text_of(html, "import-status")
    assert "<title>Importing run.jsonl · eventviewer</title>" in html

    # Its process is gone: the page says so at once, and a worker marks it failed.
    state = json.loads((item.folder / tasks.PROGRESS_FILE).read_text())
    state["pid"] = 2**22 + 1  # no such process
    (item.folder / tasks.PROGRESS_FILE).write_text(json.dumps(state))
    assert "stopped before it finished" in client.get(item.get_absolute_url()).content.decode()
    assert tasks.reap_stopped_imports() == 1
    assert DBTaskResult.objects.get(pk=result.id).status == "FAILED"
    item.refresh_from_db()
    assert item.finished_at and item.problems == [tasks.STOPPED]


def test_a_finished_import_says_imported_in_its_title_and_its_partial(client, open_site, tmp_path):
    response = upload(client, tmp_path, "run.jsonl", json.dumps(message("m1", None, "hi")))
    html = client.get(response["Location"]).content.decode()
    assert "<title>Imported run.jsonl · eventviewer</title>" in html
    assert text_of(html, "import-status").startswith("Imported run.jsonl")
    partial = client.get(response["Location"], headers={"HX-Request": "true"}).content.decode()
    assert partial.strip().startswith("<title>Imported run.jsonl · eventviewer</title>")  # htmx sets the title from it


def test_a_failed_import_offers_to_try_again(client, open_site, tmp_path):
    response = upload(client, tmp_path, "bad.jsonl", '{"id": "m1", "kind": "X",}\n')
    html = client.get(response["Location"]).content.decode()
    assert "<title>Import failed: bad.jsonl · eventviewer</title>" in html
    assert 'href="/import/">Try again</a>' in html


def test_malformed_json_is_named_by_line_and_column_in_its_file(client, open_site, tmp_path):
    response = upload(client, tmp_path, "bad.jsonl", json.dumps(message("m1", None, "hi")) + '\n{"id": "m2",}\n')
    status = text_of(client.get(response["Location"]).content.decode(), "import-status")
    assert "bad.jsonl:2: malformed JSON at line 2, column 12 (trailing comma is not allowed)" in status
    response = upload(client, tmp_path, "bad.json", '[\n  {"id": "m1", "kind": "MessageEvent"},\n  {"id" "m2"}\n]')
    status = text_of(client.get(response["Location"]).content.decode(), "import-status")
    assert "bad.json[1]: malformed JSON at line 3, column 9 (Expecting ':' delimiter)" in status


def test_an_unknown_upload_is_a_404(client, open_site):
    assert client.get("/import/00000000-0000-0000-0000-000000000000/").status_code == 404


# -- the command line shows progress on a terminal ----------------------------------


@pytest.mark.slow
def test_the_command_shows_progress_on_a_terminal_only(sqlite_file):
    import pty

    env = {**os.environ, "DATABASE_URL": f"sqlite:///{sqlite_file}", "DEBUG": "true"}
    folder = fixture_folder("simple")
    leader, follower = pty.openpty()
    done = subprocess.run(
        [sys.executable, "manage.py", "import_conversation", str(folder)],
        cwd=ROOT_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=follower,
        timeout=120,
    )
    os.close(follower)
    shown = os.read(leader, 65536).decode()
    os.close(leader)
    assert done.returncode == 0
    assert "6 of 6 events" in shown and "events/s" in shown and "files/s" in shown and "ETA" in shown
    again = subprocess.run(
        [sys.executable, "manage.py", "import_conversation", str(folder)],
        cwd=ROOT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.stderr == "" and "nothing new" in again.stdout


# -- login lockout ------------------------------------------------------------------


def test_repeated_failed_logins_lock_the_account_out(client, user, settings):
    settings.AXES_FAILURE_LIMIT = 3
    for _ in range(3):
        response = client.post("/accounts/login/", {"username": user.username, "password": "wrong"})
    assert response.status_code == 429
    right = client.post("/accounts/login/", {"username": user.username, "password": "a-long-test-password"})
    assert right.status_code == 429 and "Too many failed logins" in right.content.decode()
    assert "_auth_user_id" not in client.session


def test_a_right_password_before_the_limit_logs_in(client, user, settings):
    settings.AXES_FAILURE_LIMIT = 3
    for _ in range(2):
        client.post("/accounts/login/", {"username": user.username, "password": "wrong"})
    right = client.post("/accounts/login/", {"username": user.username, "password": "a-long-test-password"})
    assert right.status_code == 302 and "_auth_user_id" in client.session


# -- the log ---------------------------------------------------------------------


def test_a_user_s_error_is_one_line_at_info_in_the_log(client, open_site, tmp_path, caplog, folder):
    conversation = import_paths([(folder([message("m1", None, "hi")]), "t")])[0].conversation
    caplog.set_level(logging.INFO)
    assert client.get(f"/c/{conversation.conversation_id}/search/", {"q": '"unclosed'}).status_code == 400
    assert client.get("/", {"q": "ab*"}).status_code == 400  # the list answers it on its own page too
    assert client.get("/api/conversations/", {"page": "x"}).status_code == 400
    assert client.get(f"/c/{'f' * 32}/").status_code == 404
    upload(client, tmp_path, "bad.jsonl", '{"id": "m1", "kind": "X", "k": 1, "k": 2}\n')  # refused
    assert caplog.records, "the refusals are in the log"
    assert [r for r in caplog.records if r.exc_info or r.levelno > logging.INFO] == []
    said = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("Bad query: q: a quotation mark is not closed") for m in said)
    assert any(m.startswith("Bad query: q:") and m.endswith(": /") for m in said)
    assert any("bad.jsonl" in m and "nothing was imported" in m for m in said)


def test_a_real_error_keeps_its_traceback(caplog):
    from eventviewer.logfilters import UsersErrors

    try:
        raise RuntimeError("broken")
    except RuntimeError:
        record = logging.LogRecord("django.request", logging.ERROR, "x", 1, "Internal Server Error", (), sys.exc_info())
    record.status_code = 500
    assert UsersErrors().filter(record) and record.exc_info and record.levelno == logging.ERROR
    record.status_code = 400
    UsersErrors().filter(record)
    assert record.exc_info is None and record.levelname == "INFO"
