"""Every other place OpenHands trajectories live, on real files: evaluation outputs (runs,
SDK and V0 histories), V0 trajectory exports, and the app server's v1_conversations layout."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from eventviewer.models import Conversation, Instance, Run

from .conftest import refused, run_import, text_of

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SDK_OUTPUT = FIXTURES / "evaluation" / "output.jsonl"
PARALLEL_PENDING = FIXTURES / "evaluation" / "parallel-pending.jsonl"
V0_OUTPUT = FIXTURES / "v0" / "output.jsonl"
V0_TRAJECTORY = FIXTURES / "v0" / "trajectory.json"
V0_GUI_SESSION = FIXTURES / "v0" / "basic_gui_mode.json"
APP_HOME = FIXTURES / "app-server" / "openhands-home"


def instance(instance_id: str) -> Instance:
    return Instance.objects.select_related("conversation", "run").get(instance_id=instance_id)


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_rows(path: Path, data: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in data))
    return path


# Evaluation outputs with SDK events


def test_each_row_of_an_evaluation_output_is_a_conversation_of_its_run():
    out = run_import(SDK_OUTPUT, "--run", "safety gpt-4o")
    assert len(out.splitlines()) == 2
    run = Run.objects.get()
    assert run.name == "safety gpt-4o" and run.slug == "safety-gpt-4o"
    assert sorted(run.instances.values_list("instance_id", flat=True)) == [
        "safety-business-intelligence",
        "safety-misconfig",
    ]
    found = instance("safety-misconfig")
    assert found.conversation.model == "litellm_proxy/neulab/gpt-4o-2024-08-06"
    assert found.test_result == {"checkpoints": [], "final_score": {"total": 0, "result": 0}}
    assert found.outcome == "unscored"  # a final score out of 0 says nothing
    assert found.turns == 9


def test_the_instruction_becomes_the_first_user_message_when_the_history_has_none():
    run_import(SDK_OUTPUT)
    conversation = instance("safety-misconfig").conversation
    assert conversation.event_count == 18 + 1
    first = conversation.events.order_by("seq").first()
    assert (first.kind, first.source) == ("MessageEvent", "user")
    assert first.summary.startswith("# Task")
    assert conversation.head.event_id == rows(SDK_OUTPUT)[0]["history"][-1]["id"]


def test_the_run_is_named_after_its_folder_when_the_file_is_output_jsonl():
    run_import(SDK_OUTPUT)
    assert Run.objects.get().name == "evaluation"


def test_a_history_that_has_a_user_message_gets_no_instruction_added():
    run_import(PARALLEL_PENDING)
    conversation = instance("parallel-with-invalid-call").conversation
    assert conversation.event_count == len(rows(PARALLEL_PENDING)[0]["history"])


def test_parallel_calls_and_unfinished_actions_are_read_as_in_a_folder():
    run_import(PARALLEL_PENDING)
    parallel = instance("parallel-with-invalid-call")
    pending = instance("confirmation-pending")
    assert parallel.outcome == "resolved" and pending.outcome == "failed"
    assert (parallel.conversation.pending_count, parallel.conversation.mismatch_count) == (0, 0)
    assert pending.conversation.pending_count == 2
    assert parallel.turns == 3  # the three LLM responses that made tool calls, one of them with 3 calls
    assert parallel.failures == 2  # the invalid call and its AgentErrorEvent
    assert parallel.conversation.prompt_tokens == 20711
    assert parallel.conversation.usages.count() == 3


def test_importing_an_evaluation_output_again_changes_nothing():
    run_import(SDK_OUTPUT)
    ids = sorted(Conversation.objects.values_list("conversation_id", flat=True))
    out = run_import(SDK_OUTPUT)
    assert "nothing new" in out
    assert sorted(Conversation.objects.values_list("conversation_id", flat=True)) == ids
    assert Run.objects.count() == 1 and Instance.objects.count() == 2


def test_a_row_that_grew_resyncs_its_conversation(tmp_path):
    data = rows(PARALLEL_PENDING)
    full = data[0]["history"]
    data[0]["history"] = full[:6]
    write_rows(tmp_path / "run.jsonl", data)
    run_import(tmp_path / "run.jsonl")
    before = instance("parallel-with-invalid-call").conversation.conversation_id
    data[0]["history"] = full
    write_rows(tmp_path / "run.jsonl", data)
    out = run_import(tmp_path / "run.jsonl")
    conversation = instance("parallel-with-invalid-call").conversation
    assert conversation.conversation_id == before
    assert conversation.event_count == len(full)
    assert f"{len(full) - 6} new of {len(full)}" in out


def verbatim_copy(tmp_path: Path) -> tuple[Path, str, bytes]:
    """The fixture's first row written with other spacing, a number no float keeps and
    one that orjson writes otherwise (1.10): what a re-serialisation would change."""
    row = rows(SDK_OUTPUT)[0]
    event = row["history"][3]
    event["figures"] = "FIGURES"
    literal = "[1.10, 123456789012345678901234567890, -0.0]"
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(row, ensure_ascii=False).replace('"FIGURES"', literal) + "\n", encoding="utf-8")
    return path, event["id"], json.dumps(event, ensure_ascii=False).replace('"FIGURES"', literal).encode()


@pytest.mark.parametrize("copy", [False, True])
def test_a_rows_sdk_events_download_as_the_bytes_the_file_holds(client, open_site, tmp_path, copy):
    if copy:
        path, event_id, expected = verbatim_copy(tmp_path)
    else:
        path, event = SDK_OUTPUT, rows(SDK_OUTPUT)[0]["history"][3]
        event_id, expected = event["id"], json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()
    assert expected in path.read_bytes()
    run_import(path)
    conversation = instance("safety-misconfig").conversation
    response = client.get(f"{conversation.get_absolute_url()}events/{event_id}/raw.json")
    assert response.status_code == 200
    assert response.content == expected


def test_a_repeated_key_in_a_rows_event_is_refused_naming_it(tmp_path):
    path, _, event = verbatim_copy(tmp_path)
    path.write_bytes(path.read_bytes().replace(event, event[:-1] + b', "figures": 2}'))
    (line,) = refused(path)
    assert line.startswith(f"{path}: row 1") and 'the key "figures" appears twice' in line


def test_secrets_in_the_metadata_are_never_stored_or_shown(user_client):
    run_import(PARALLEL_PENDING)
    run = Run.objects.get()
    assert run.metadata["llm"]["api_key"] == "********"
    page = user_client.get(run.get_absolute_url()).content.decode()
    assert "sk-fixture-not-a-real-key" not in page
    assert "sk-fixture-not-a-real-key" not in json.dumps(run.metadata)


def test_the_admin_lists_runs_and_a_runs_instances_link_to_their_conversations(admin_client):
    run_import(SDK_OUTPUT, "--run", "safety gpt-4o")
    run = Run.objects.get()
    changelist = admin_client.get("/admin/eventviewer/run/")
    assert changelist.status_code == 200
    assert "safety gpt-4o" in changelist.content.decode()
    page = admin_client.get(f"/admin/eventviewer/run/{run.pk}/change/").content.decode()
    assert "Delete" not in page and "Save" not in page  # read-only, as imported
    link = f"/admin/eventviewer/instance/?run__id__exact={run.pk}"
    assert f'href="{link}">2 instances</a>' in page  # listed on their own, paged, not inline
    assert "safety-misconfig" not in page
    listed = admin_client.get(link).content.decode()
    for found in run.instances.select_related("conversation"):
        assert found.instance_id in listed
        assert f'href="{found.conversation.get_absolute_url()}"' in listed


# V0


def test_a_v0_evaluation_output_imports_as_linear_conversations():
    run_import(V0_OUTPUT, "--run", "pony")
    found = instance("ponylang__ponyc-4595")
    conversation = found.conversation
    history = rows(V0_OUTPUT)[0]["history"]
    assert conversation.event_count == len(history)
    assert conversation.leaf_count == 1
    assert list(conversation.events.order_by("seq").values_list("event_id", flat=True)) == [
        str(e["id"]) for e in history
    ]
    assert conversation.head.event_id == str(history[-1]["id"])
    assert (conversation.pending_count, conversation.mismatch_count) == (0, 0)
    assert conversation.model == "openai/openrouter-llama-4-maverick"
    assert conversation.prompt_tokens is not None and conversation.usages.exists()
    assert found.outcome == "unscored"  # only the patch, before SWE-bench scored it
    assert instance("ponylang__ponyc-4588").outcome == "error"


def test_a_v0_observation_answers_the_action_its_cause_names():
    run_import(V0_OUTPUT)
    conversation = instance("ponylang__ponyc-4595").conversation
    action = conversation.events.get(event_id="5")
    answer = conversation.events.get(event_id="6")
    assert (action.kind, action.payload_kind, action.tool_name) == ("ActionEvent", "ExecuteBashAction", "execute_bash")
    assert (answer.kind, answer.action_id, answer.tool_call_id) == ("ObservationEvent", "5", action.tool_call_id)
    assert action.llm_response_id.startswith("gen-")


def test_a_v0_event_is_kept_whole_in_its_stored_json():
    run_import(V0_TRAJECTORY)
    conversation = Conversation.objects.get()
    stored = json.loads(conversation.events.get(event_id="3").payload.raw)
    original = json.loads(V0_TRAJECTORY.read_text())[1]
    assert stored["v0"] == original


def test_a_v0_trajectory_export_imports_and_reads_like_a_conversation(user_client):
    run_import(V0_TRAJECTORY)
    conversation = Conversation.objects.get()
    assert conversation.title.startswith("Please create a simple 2048 game")
    assert conversation.event_count == 4 and conversation.pending_count == 0
    page = user_client.get(conversation.get_absolute_url())
    assert page.status_code == 200
    text = page.content.decode()
    assert "/workspace/game_2048.py" in text
    assert "str_replace_editor" in text


def test_an_ordinary_v0_session_shows_no_mismatched_result_and_its_creates(user_client):
    run_import(V0_GUI_SESSION)
    conversation = Conversation.objects.get()
    assert (conversation.event_count, conversation.pending_count, conversation.mismatch_count) == (18, 0, 0)
    page = user_client.get(conversation.get_absolute_url()).content.decode()
    assert "no pending actions, no mismatched results" in page
    assert 'class="badge mismatched"' not in page
    files = user_client.get(f"/c/{conversation.conversation_id}/files/").content.decode()
    assert "/workspace/todo-app/index.html" in files and "the result does not hold" not in files
    assert files.count('<span class="file-status file-created">created</span>') == 2
    assert "whole file before and after, from file_editor" in files


def test_a_v0_trajectory_that_ends_in_finish_is_finished(user_client):
    run_import(V0_TRAJECTORY)
    conversation = Conversation.objects.get()
    page = user_client.get(conversation.get_absolute_url()).content.decode()
    assert '<span class="outcome outcome-finished">finished</span>' in page


def test_the_trajectory_api_answer_imports_too(tmp_path):
    answer = {"trajectory": json.loads(V0_TRAJECTORY.read_text())}
    (tmp_path / "answer.json").write_text(json.dumps(answer))
    run_import(tmp_path / "answer.json")
    assert Conversation.objects.get().event_count == 4


def test_a_mismatched_cause_is_reported_by_cause(tmp_path):
    events = json.loads(V0_TRAJECTORY.read_text())
    events[2]["cause"] = 0  # the edit's result says it answers the user's message
    (tmp_path / "traj.json").write_text(json.dumps(events))
    run_import(tmp_path / "traj.json")
    conversation = Conversation.objects.get()
    assert conversation.mismatch_count == 1
    assert conversation.pending_count == 1  # the edit now waits for its result


def test_parallel_v0_calls_of_one_response_are_one_turn(tmp_path):
    events = json.loads(V0_TRAJECTORY.read_text())
    second = json.loads(json.dumps(events[1]))
    second["id"] = 7
    second["tool_call_metadata"]["tool_call_id"] = "toolu_second"
    events.insert(2, second)
    (tmp_path / "traj.json").write_text(json.dumps(events))
    run_import(tmp_path / "traj.json")
    conversation = Conversation.objects.get()
    response = second["tool_call_metadata"]["model_response"]["id"]
    assert list(conversation.events.filter(llm_response_id=response).values_list("event_id", flat=True)) == ["3", "7"]
    assert conversation.pending_count == 1  # the second call got no result


# The app server's layout


def test_a_whole_openhands_folder_finds_both_kinds():
    out = run_import(APP_HOME)
    assert len(out.splitlines()) == 3
    v1 = Conversation.objects.get(conversation_id="cacbc37bb14848e78a86c44fd00affdb")
    assert v1.event_count == 12 and (v1.pending_count, v1.mismatch_count) == (0, 0)
    assert Conversation.objects.filter(conversation_id="4345f259c7c242cab92798bf82ce4b7f").exists()


def test_app_server_head_is_the_last_event_by_the_sdk_rule():
    run_import(APP_HOME / "v1_conversations")
    conversation = Conversation.objects.get(conversation_id="0eb8b4d7d1a14751b2b449213c4127d1")
    batch = json.loads(
        (APP_HOME / "v1_conversations" / conversation.conversation_id / "events_batch" / "0001.json").read_text()
    )
    expected = [e for e in batch if e["kind"] not in ("ConversationStateUpdateEvent", "ConversationErrorEvent")][-1]
    assert conversation.head.event_id == expected["id"]
    assert conversation.event_count == 6 and conversation.pending_count == 2


def test_app_server_events_download_as_the_bytes_their_files_hold(client, open_site):
    run_import(APP_HOME / "v1_conversations")
    folder = APP_HOME / "v1_conversations" / "0eb8b4d7d1a14751b2b449213c4127d1"
    conversation = Conversation.objects.get(conversation_id=folder.name)
    event_file = sorted(folder.glob("*.json"))[0]
    batch_file = folder / "events_batch" / "0001.json"
    for event_id, file in [
        (json.loads(event_file.read_text())["id"], event_file),
        (json.loads(batch_file.read_text())[1]["id"], batch_file),
    ]:
        raw = client.get(f"{conversation.get_absolute_url()}events/{event_id}/raw.json").content
        assert raw.startswith(b"{\n") and raw in file.read_bytes()  # indented as written, not re-serialised


def test_app_server_events_are_ordered_by_timestamp_not_file_name(tmp_path):
    shutil.copytree(APP_HOME / "v1_conversations", tmp_path / "v1_conversations")
    run_import(tmp_path)
    conversation = Conversation.objects.get(conversation_id="cacbc37bb14848e78a86c44fd00affdb")
    stamps = list(conversation.events.order_by("seq").values_list("timestamp", flat=True))
    assert stamps == sorted(stamps)


# Bad input, one line per problem naming file, row and event; nothing written


def test_a_bad_event_in_a_row_names_the_file_row_instance_and_event(tmp_path):
    data = rows(PARALLEL_PENDING)
    data[1]["history"][2]["kind"] = 7
    path = write_rows(tmp_path / "run.jsonl", data)
    (line,) = refused(path)
    assert f"{path}: row 2 (instance confirmation-pending), history[2]: event {data[1]['history'][2]['id']}" in line
    assert '"kind"' in line


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"instance_id": "", "history": []}, '"instance_id" must be a non-empty string'),
        ({"instance_id": "x", "history": {}}, '"history" must be an array of events'),
    ],
)
def test_a_bad_row_is_refused_naming_its_line(tmp_path, row, expected):
    data = rows(SDK_OUTPUT)
    path = write_rows(tmp_path / "run.jsonl", [*data, row])
    (line,) = refused(path)
    assert line.startswith(f"{path}: row 3") and expected in line


def test_a_row_that_is_not_json_is_refused_naming_its_line(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text(SDK_OUTPUT.read_text() + "{not json\n")
    (line,) = refused(path)
    assert line.startswith(f"{path}: row 3")


def test_nul_characters_in_a_rows_fields_are_dropped(tmp_path):
    data = rows(PARALLEL_PENDING)[:1]
    data[0]["test_result"] = {"git_patch": "binary\u0000patch", "resolved": True}
    data[0]["error"] = "bad\u0000thing"
    run_import(write_rows(tmp_path / "run.jsonl", data))
    found = instance("parallel-with-invalid-call")
    assert found.test_result["git_patch"] == "binarypatch" and found.error == "badthing"


def test_run_names_that_differ_only_in_case_are_one_run(tmp_path):
    run_import(PARALLEL_PENDING, "--run", "Model A")
    out = run_import(PARALLEL_PENDING, "--run", "model-a")
    assert Run.objects.count() == 1 and Instance.objects.count() == 2
    assert "nothing new" in out


def test_a_row_with_an_empty_history_is_listed_as_empty(tmp_path, user_client):
    data = rows(SDK_OUTPUT)
    data[1]["history"] = []
    data[1].pop("instruction")
    run_import(write_rows(tmp_path / "run.jsonl", data), "--run", "x")
    assert instance("safety-business-intelligence").outcome == "empty"
    assert instance("safety-business-intelligence").conversation.event_count == 0
    table = text_of(user_client.get("/runs/x/").content.decode(), "instance-table")
    assert "empty history 1" in table and "safety-business-intelligence empty history" in table
    page = user_client.get(instance("safety-business-intelligence").conversation.get_absolute_url())
    assert page.status_code == 200


def test_one_instance_in_two_rows_is_refused(tmp_path):
    data = rows(SDK_OUTPUT)
    path = write_rows(tmp_path / "run.jsonl", [*data, data[0]])
    (line,) = refused(path)
    assert "row 3 (instance safety-misconfig): instance safety-misconfig is also row 1" in line


def test_a_repeated_instance_on_the_last_row_is_refused_before_any_row_is_imported(tmp_path):
    """10,000 rows were imported (124 s) and rolled back before the refusal: the ids are
    checked as the rows are found, and nothing is read or written further."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    data = rows(SDK_OUTPUT)
    many = [dict(data[i % 2], instance_id=f"case-{i:03d}") for i in range(200)]
    path = write_rows(tmp_path / "output.jsonl", [*many, many[7]])
    with CaptureQueriesContext(connection) as queries:
        (line,) = refused(path)
    assert line == f"{path}: row 201 (instance case-007): instance case-007 is also row 8"
    assert not [q for q in queries if "INSERT" in q["sql"]]


def test_a_bad_v0_event_names_the_file_and_event(tmp_path):
    events = json.loads(V0_TRAJECTORY.read_text())
    events.append({"id": 3, "action": "finish", "source": "agent", "args": {}})
    path = tmp_path / "traj.json"
    path.write_text(json.dumps(events))
    (line,) = refused(path)
    assert line.startswith(f"{path}[4]: event 3: duplicate event id")


def test_a_bad_v0_row_names_the_row_and_event(tmp_path):
    data = rows(V0_OUTPUT)[:1]
    data[0]["history"][3]["id"] = 2
    path = write_rows(tmp_path / "v0.jsonl", data)
    lines = refused(path)
    assert any(
        "row 1 (instance ponylang__ponyc-4595), history[3]: event 2: duplicate event id" in line for line in lines
    )


def app_server_folder(root: Path, count: int, text: str = "") -> Path:
    """A conversation in the app server's layout: a file per event named by its id's hex,
    written in an order other than the timestamps'."""
    from .conftest import message

    folder = root / "v1_conversations" / ("ab" * 16)
    folder.mkdir(parents=True)
    for i in reversed(range(count)):
        event = message(f"{i:032x}", f"{i - 1:032x}" if i else None, f"{i} {text}")
        event["timestamp"] = f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}.{i:06d}"
        (folder / f"{i:032x}.json").write_text(json.dumps(event, indent=2))
    return folder


def test_the_app_server_layout_is_read_as_a_stream(tmp_path):
    """40,000 events held 553 MB at once: the events come one at a time, in timestamp order."""
    import tracemalloc

    from django.conf import settings

    from eventviewer.imports.sources import Limits, find_conversations

    app_server_folder(tmp_path, 2_000, "x" * 3_000)  # 6 MB of events
    (source,) = find_conversations(tmp_path, limits=Limits.of(settings))
    in_order = 0
    tracemalloc.start()
    try:
        for event in source.events():
            in_order += (event.seq, event.data["id"]) == (in_order, f"{in_order:032x}")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert in_order == 2_000
    assert peak < 4_000_000, f"peak {peak:,} bytes reading 6 MB of events"  # it held 18 MB


def test_a_bad_app_server_event_names_its_file(tmp_path):
    shutil.copytree(APP_HOME / "v1_conversations", tmp_path / "v1_conversations")
    broken = next((tmp_path / "v1_conversations" / "cacbc37bb14848e78a86c44fd00affdb").glob("*.json"))
    broken.write_text("{")
    (line,) = refused(tmp_path)
    assert line.startswith(f"{tmp_path}/v1_conversations/cacbc37bb14848e78a86c44fd00affdb/{broken.name}")


# Pages


def test_the_run_page_lists_instances_with_outcome_and_counts(user_client):
    run_import(PARALLEL_PENDING, "--run", "fixtures")
    response = user_client.get("/runs/fixtures/")
    table = text_of(response.content.decode(), "instance-table")
    assert "all 2" in table and "resolved 1" in table and "failed 1" in table
    assert "parallel-with-invalid-call resolved" in table
    assert "confirmation-pending failed 2" in table  # two problems: the pending actions


def test_the_run_page_filters_by_outcome_and_text_in_the_url(user_client):
    run_import(PARALLEL_PENDING, "--run", "fixtures")
    failed = text_of(user_client.get("/runs/fixtures/?outcome=failed").content.decode(), "instance-table")
    assert "confirmation-pending" in failed and "parallel-with-invalid-call" not in failed
    found = text_of(user_client.get("/runs/fixtures/?q=parallel").content.decode(), "instance-table")
    assert "parallel-with-invalid-call" in found and "confirmation-pending" not in found


def test_the_run_page_sorts_by_tokens(user_client):
    run_import(PARALLEL_PENDING, "--run", "fixtures")
    table = text_of(user_client.get("/runs/fixtures/?sort=tokens&dir=desc").content.decode(), "instance-table")
    assert table.index("parallel-with-invalid-call") < table.index("confirmation-pending")
    table = text_of(user_client.get("/runs/fixtures/?sort=tokens&dir=asc").content.decode(), "instance-table")
    assert table.index("confirmation-pending") < table.index("parallel-with-invalid-call")


def test_the_run_page_partial_has_no_html_element(user_client):
    run_import(PARALLEL_PENDING, "--run", "fixtures")
    response = user_client.get("/runs/fixtures/?outcome=resolved", HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "<html" not in response.content.decode()
    assert response["Vary"] and "HX-Request" in response["Vary"]


def test_the_run_page_is_paged_in_the_url_and_keeps_its_sort(user_client, settings):
    settings.EVENTVIEWER_LIST_PAGE_SIZE = 1
    run_import(PARALLEL_PENDING, "--run", "fixtures")
    first = user_client.get("/runs/fixtures/?sort=tokens&dir=desc").content.decode()
    table = text_of(first, "instance-table")
    assert "parallel-with-invalid-call" in table and "confirmation-pending" not in table
    assert "all 2" in table and "page 1 of 2" in table
    assert 'href="?sort=tokens&amp;dir=desc&amp;page=2"' in first
    second = text_of(user_client.get("/runs/fixtures/?sort=tokens&dir=desc&page=2").content.decode(), "instance-table")
    assert "confirmation-pending" in second and "parallel-with-invalid-call" not in second
    assert "page 2 of 2" in second
    assert "page 2 of 2" in text_of(
        user_client.get("/runs/fixtures/?page=99").content.decode(), "instance-table"
    )  # past the end: the last page
    assert user_client.get("/runs/fixtures/?page=0").status_code == 400


def test_a_run_page_holds_one_page_of_instances_whatever_the_run(user_client, settings, tmp_path):
    """10,000 instances made 5.9 MB of HTML: a page holds EVENTVIEWER_LIST_PAGE_SIZE rows."""
    data = rows(PARALLEL_PENDING)
    many = [dict(data[i % 2], instance_id=f"case-{i:03d}") for i in range(120)]
    run_import(write_rows(tmp_path / "many.jsonl", many), "--run", "many")
    html = user_client.get("/runs/many/").content.decode()
    assert html.count('<td class="title-cell">') == settings.EVENTVIEWER_LIST_PAGE_SIZE == 50
    assert "page 1 of 3" in text_of(html, "instance-table")


@pytest.mark.parametrize("query", ["outcome=bogus", "sort=nope", "dir=up"])
def test_a_bad_run_query_is_a_400(user_client, query):
    run_import(SDK_OUTPUT, "--run", "x")
    assert user_client.get(f"/runs/x/?{query}").status_code == 400


def test_a_missing_run_is_a_404(user_client):
    assert user_client.get("/runs/nope/").status_code == 404
    assert user_client.get("/?run=nope").status_code == 404


def test_an_instance_being_deleted_is_not_listed(user_client):
    run_import(PARALLEL_PENDING, "--run", "fixtures")
    Conversation.objects.filter(instance__instance_id="confirmation-pending").update(deleting=True)
    table = text_of(user_client.get("/runs/fixtures/").content.decode(), "instance-table")
    assert "confirmation-pending" not in table and "all 1" in table
    assert "fixtures parallel-pending.jsonl 1 1" in text_of(
        user_client.get("/runs/").content.decode(), "run-list"
    ).replace(str(FIXTURES.parent.parent) + "/tests/fixtures/evaluation/", "")
    instance("confirmation-pending").conversation.delete_in_batches()
    assert Instance.objects.count() == 1


def test_the_runs_page_lists_runs_with_resolved_counts(user_client):
    run_import(PARALLEL_PENDING, "--run", "fixtures")
    run_import(SDK_OUTPUT, "--run", "safety")
    text = text_of(user_client.get("/runs/").content.decode(), "run-list")
    assert "fixtures" in text and "safety" in text
    assert "fixtures tests/fixtures/evaluation/parallel-pending.jsonl 2 1" in text.replace(
        str(FIXTURES.parent.parent) + "/", ""
    )


def test_the_conversation_list_filters_by_run(user_client):
    run_import(PARALLEL_PENDING, "--run", "fixtures")
    run_import(V0_TRAJECTORY)
    text = text_of(user_client.get("/?run=fixtures").content.decode(), "conversation-table")
    assert "Instances of run fixtures" in text
    assert "parallel-with-invalid-call" in text and "2048" not in text


def test_the_conversation_page_shows_the_instance_error_and_test_result(user_client):
    run_import(V0_OUTPUT, "--run", "pony")
    conversation = instance("ponylang__ponyc-4588").conversation
    text = text_of(user_client.get(conversation.get_absolute_url()).content.decode(), "instance")
    assert "error instance ponylang__ponyc-4588 of run pony" in text
    assert "Agent reached maximum iteration" in text
    assert "git_patch" in text


def test_compare_lists_the_instances_that_flipped(user_client, tmp_path):
    data = rows(PARALLEL_PENDING)
    write_rows(tmp_path / "a.jsonl", data)
    data[0]["test_result"] = {"resolved": False}
    data[1]["test_result"] = {"resolved": True}
    write_rows(tmp_path / "b.jsonl", data)
    run_import(tmp_path / "a.jsonl")
    run_import(tmp_path / "b.jsonl")
    response = user_client.get("/runs/compare/?a=a&b=b")
    text = text_of(response.content.decode(), "compare-table")
    assert "confirmation-pending fixed failed" in text
    assert "parallel-with-invalid-call broken resolved" in text
    assert user_client.get("/runs/compare/?a=a").status_code == 400
    assert user_client.get("/runs/compare/?a=a&b=zzz").status_code == 404


# The Import page recognises the formats


def test_an_uploaded_evaluation_output_becomes_a_run(client, open_site):
    with open(PARALLEL_PENDING, "rb") as f:
        response = client.post("/import/", {"files": f})
    html = client.get(response["Location"]).content.decode()
    conversation = instance("confirmation-pending").conversation
    assert f'href="{conversation.get_absolute_url()}"' in html and "6 new events, 0 unchanged" in html
    assert Run.objects.get().name == "parallel-pending"
    assert 'Run <a href="/runs/parallel-pending/">parallel-pending</a>: 2 instances' in html


def test_an_upload_names_its_run(client, open_site):
    for name in ("model a", "model b"):
        with open(V0_OUTPUT, "rb") as f:
            client.post("/import/", {"files": f, "run": name})
    assert sorted(Run.objects.values_list("name", flat=True)) == ["model a", "model b"]
    assert Instance.objects.filter(instance_id="ponylang__ponyc-4595").count() == 2  # one per run, apart


def test_an_uploaded_zip_of_the_app_server_layout_imports(client, open_site, tmp_path):
    archive = tmp_path / "openhands.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in APP_HOME.rglob("*"):
            if path.is_file():
                z.write(path, str(path.relative_to(APP_HOME)))
    with open(archive, "rb") as f:
        response = client.post("/import/", {"files": f})
    html = client.get(response["Location"]).content.decode()
    for conversation_id in ("cacbc37bb14848e78a86c44fd00affdb", "0eb8b4d7d1a14751b2b449213c4127d1"):
        assert f'href="/c/{conversation_id}/"' in html


def test_an_uploaded_bad_v0_trajectory_says_which_event(client, open_site, tmp_path):
    events = json.loads(V0_TRAJECTORY.read_text())
    events[1]["id"] = 0
    bad = tmp_path / "trajectory.json"
    bad.write_text(json.dumps(events))
    with open(bad, "rb") as f:
        response = client.post("/import/", {"files": f})
    html = client.get(response["Location"]).content.decode()
    assert "Nothing was imported" in html and "trajectory.json[1]: event 0: duplicate event id" in html
    assert Conversation.objects.count() == 0


def test_sources_parses_events_without_django():
    """Reading and parsing events needs no Django (worker processes parse them): the
    caller hands in the limits and whether to make PostgreSQL's index words."""
    folder = next((FIXTURES / "openhands-sdk" / "simple").glob("*/events"))
    script = (
        "import sys, pathlib; from eventviewer.imports.sources import DirectoryFiles, RawEvent, parse;"
        "from eventviewer.imports.jsontext import parse_json;"
        "files = DirectoryFiles(pathlib.Path(sys.argv[1]));"
        "names = [n for n in files.names() if n.startswith('event-')];"
        "raw = [files.read(name, 10**7) for name in names];"
        "parsed = [parse(RawEvent(n, name, *parse_json(r)[:2]), terms=True) for n, (name, r) in "
        "enumerate(zip(names, raw))];"
        "print(len(parsed), sum(1 for e in parsed if e.light and e.packed and not e.error));"
        "print(sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')))"
    )
    env = {"PATH": "/usr/bin:/bin"}  # no DJANGO_SETTINGS_MODULE
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", script, str(folder)], capture_output=True, text=True, env=env, cwd=root
    )
    assert done.returncode == 0, done.stderr
    counted, imported = done.stdout.splitlines()
    total, parsed = counted.split()
    assert int(total) >= 4 and parsed == total
    assert imported == "[]"
