"""No secret of the owner's reaches a reader: run metadata on the run page and in the
admin, base_state.json in its download and in every export zip (a reviewer's above all)."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from eventviewer.models import Conversation, Run

from .conftest import message, refused, run_import
from .trajectory.test_masking import HOSTILE_METADATA, SECRETS

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PARALLEL_PENDING = FIXTURES / "evaluation" / "parallel-pending.jsonl"

# What the attack pass found in a reviewer's zip: the agent's API key, the secret
# registry's values and a proxy password.
HOSTILE_STATE = {
    "agent": {
        "llm": {
            "model": "openai/fixture-model",
            "api_key": "sk-live-agentkey0123456789",
            "base_url": "http://proxyuser:proxypass42@proxy.internal:3128/v1",
            "max_input_tokens": 128000,
        },
        "mcp_config": {"mcpServers": {"fetch": {"env": {"HTTPS_PROXY": "http://u:mcpproxypw@proxy:3128"}}}},
    },
    "secret_registry": {"secret_sources": {"GITHUB_TOKEN": {"kind": "StaticSecret", "value": "registrysecret77"}}},
    "max_iterations": 500,
}
STATE_SECRETS = ["agentkey0123456789", "proxypass42", "mcpproxypw", "registrysecret77"]


def content(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def zipped_states(response) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(content(response))) as archive:
        return {n: archive.read(n) for n in archive.namelist() if n.endswith("base_state.json")}


@pytest.fixture
def hostile(db, folder) -> Conversation:
    run_import(folder([message("m1", None, "hi")], base_state=HOSTILE_STATE))
    return Conversation.objects.get()


def test_a_reviewers_zip_holds_no_secret_of_base_state(client, hostile):
    share = hostile.share_links.create()
    for url in (f"{share.get_absolute_url()}export.zip", f"{share.get_absolute_url()}export.zip?raw=1"):
        response = client.get(url)
        assert response.status_code == 200
        (state,) = zipped_states(response).values()
        assert [s for s in STATE_SECRETS if s.encode() in state] == [], url
        data = json.loads(state)
        assert data["agent"]["llm"]["api_key"] == "********"
        assert data["agent"]["llm"]["base_url"] == "http://proxyuser:********@proxy.internal:3128/v1"
        assert data["agent"]["llm"]["max_input_tokens"] == 128000 and data["max_iterations"] == 500
        assert list(data["secret_registry"]["secret_sources"]) == ["GITHUB_TOKEN"]


def test_the_owners_downloads_are_masked_unless_the_raw_file_is_asked_for(client, open_site, hostile):
    url = hostile.get_absolute_url()
    for masked in (
        client.get(f"{url}base_state.json").content,
        *zipped_states(client.get(f"{url}export.zip")).values(),
    ):
        assert [s for s in STATE_SECRETS if s.encode() in masked] == []
    raw = client.get(f"{url}base_state.json?raw=1").content
    assert json.loads(raw)["agent"]["llm"]["api_key"] == "sk-live-agentkey0123456789"
    (zipped,) = zipped_states(client.get(f"{url}export.zip?raw=1")).values()
    assert zipped == raw
    assert client.get(f"{url}base_state.json?raw=yes").status_code == 400


def test_the_raw_zip_is_offered_to_the_owner_only(client, open_site, hostile):
    page = client.get(hostile.get_absolute_url()).content.decode()
    assert "export.zip?raw=1" in page
    share = hostile.share_links.create()
    assert "raw=1" not in client.get(share.get_absolute_url()).content.decode()


def hostile_rows(tmp_path: Path) -> Path:
    row = json.loads(PARALLEL_PENDING.read_text().splitlines()[0])
    row["metadata"] = HOSTILE_METADATA
    path = tmp_path / "hostile-run.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


def test_no_secret_of_the_metadata_reaches_the_run_page_or_the_admin(admin_client, tmp_path):
    run_import(hostile_rows(tmp_path))
    run = Run.objects.get()
    assert [s for s in SECRETS if s in json.dumps(run.metadata)] == []
    for page in (
        admin_client.get(run.get_absolute_url()).content.decode(),
        admin_client.get(f"/admin/eventviewer/run/{run.pk}/change/").content.decode(),
    ):
        assert [s for s in SECRETS if s in page] == []
        assert "128000" in page and "4096" in page  # max_input_tokens, max_output_tokens


def test_metadata_stored_before_a_rule_existed_is_masked_on_the_way_out(admin_client):
    run = Run.objects.create(name="old", slug="old", metadata=HOSTILE_METADATA)
    for page in (
        admin_client.get(run.get_absolute_url()).content.decode(),
        admin_client.get(f"/admin/eventviewer/run/{run.pk}/change/").content.decode(),
    ):
        assert [s for s in SECRETS if s in page] == []


# -- an import never moves a conversation under another ------------------------------------

SUBAGENT_PARENT = FIXTURES / "openhands-sdk" / "subagent" / "9045bd153bf34257918dd33313c0296c"
SUBAGENT = "5d35df6469664370bfd6a980a815759a"


def test_a_subagent_folder_naming_a_conversation_of_its_own_is_refused_and_moves_nothing(db, tmp_path):
    standalone = tmp_path / SUBAGENT
    shutil.copytree(SUBAGENT_PARENT / "subagents" / SUBAGENT, standalone)
    run_import(standalone)
    lines = refused(SUBAGENT_PARENT)
    assert any(
        f"{SUBAGENT}: this sub-agent folder names conversation {SUBAGENT}, already imported as a conversation "
        "of its own"
        in line
        and "never moves" in line
        for line in lines
    ), lines
    (alone,) = Conversation.objects.all()
    assert alone.conversation_id == SUBAGENT and alone.parent is None


def test_a_subagent_of_another_parent_is_not_taken_over(db, tmp_path):
    run_import(SUBAGENT_PARENT)
    other = tmp_path / "ffffffffffffffffffffffffffffffff"
    shutil.copytree(SUBAGENT_PARENT, other)
    (other / "base_state.json").unlink()
    lines = refused(other)
    assert any(f"already imported as a sub-agent of {SUBAGENT_PARENT.name}" in line for line in lines), lines
    child = Conversation.objects.get(conversation_id=SUBAGENT)
    assert child.parent.conversation_id == SUBAGENT_PARENT.name


def test_importing_a_parent_again_keeps_its_subagents(db):
    run_import(SUBAGENT_PARENT)
    run_import(SUBAGENT_PARENT)
    child = Conversation.objects.get(conversation_id=SUBAGENT)
    assert child.parent.conversation_id == SUBAGENT_PARENT.name
