"""Reviews travel in the conversation's zip (reviews.json) and come back on import, once."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from eventviewer.imports.importer import ImportFailed, import_paths
from eventviewer.models import Comment, Conversation, ConversationLabel, Instance, Label, ShareLink, Verdict

from .conftest import run_import
from .reviewing import default_labels  # noqa: F401

pytestmark = pytest.mark.django_db
EVALUATION = Path(__file__).resolve().parent / "fixtures" / "evaluation" / "output.jsonl"


def body(response) -> bytes:
    return b"".join(response.streaming_content)


@pytest.fixture
def reviewed(user_client, imported) -> Conversation:
    conversation = imported("branching-retries")
    leaf = conversation.skeleton["head"]
    root = conversation.events.get(seq=0).event_id
    url = f"{conversation.get_absolute_url()}comments/"
    user_client.post(url, {"event_id": root, "leaf": leaf, "body": "**why** here?", "labels": ["root cause"]})
    first = Comment.objects.get()
    user_client.post(url, {"parent": str(first.pk), "leaf": leaf, "body": "because"})
    user_client.post(f"{url}{first.pk}/", {"action": "resolve", "leaf": leaf})
    user_client.post(f"{conversation.get_absolute_url()}verdict/", {"verdict": "fail", "note": "gave up"})
    ConversationLabel.objects.create(conversation=conversation, label=Label.objects.get(name="gave up"), author="x")
    return conversation


def state(conversation: Conversation) -> tuple:
    comments = sorted(
        (
            c.event_id,
            c.body,
            c.author,
            c.resolved,
            c.parent.body if c.parent else None,
            tuple(label.name for label in c.labels.all()),
        )
        for c in Comment.objects.filter(conversation=conversation)
    )
    verdicts = sorted(Verdict.objects.filter(conversation=conversation).values_list("reviewer", "outcome", "note"))
    labels = sorted(ConversationLabel.objects.filter(conversation=conversation).values_list("label__name", flat=True))
    return comments, verdicts, labels


def test_the_zip_carries_reviews_and_they_come_back_once(user_client, reviewed, tmp_path):
    before = state(reviewed)
    assert len(before[0]) == 2 and before[1] and before[2] == ["gave up"]
    zipped = body(user_client.get(f"{reviewed.get_absolute_url()}export.zip"))
    archive = zipfile.ZipFile(io.BytesIO(zipped))
    data = json.loads(archive.read(f"{reviewed.conversation_id}/reviews.json"))
    assert [c["body"] for c in data["comments"]] == ["**why** here?", "because"]
    path = tmp_path / "moved.zip"
    path.write_bytes(zipped)
    Conversation.objects.all().delete()  # another server: nothing of it here
    assert not Comment.objects.exists()
    (result,) = import_paths([(path, path.name)])
    assert state(result.conversation) == before
    import_paths([(path, path.name)])  # again: no duplicates
    assert state(result.conversation) == before
    assert Comment.objects.count() == 2 and Verdict.objects.count() == 1


def test_a_zip_without_reviews_has_no_reviews_file(user_client, imported):
    conversation = imported("simple")
    names = zipfile.ZipFile(
        io.BytesIO(body(user_client.get(f"{conversation.get_absolute_url()}export.zip")))
    ).namelist()
    assert not any(n.endswith("reviews.json") for n in names)


def test_a_read_only_links_zip_leaves_the_reviews_out(reviewed):
    read_only = ShareLink.objects.create(conversation=reviewed)
    commenting = ShareLink.objects.create(conversation=reviewed, can_comment=True)

    def names(share: ShareLink) -> list[str]:
        return zipfile.ZipFile(io.BytesIO(body(Client().get(f"{share.get_absolute_url()}export.zip")))).namelist()

    assert not any(n.endswith("reviews.json") for n in names(read_only))
    assert any(n.endswith("reviews.json") for n in names(commenting))


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda d: d.update(version=9), 'expected a JSON object with "version": 1'),
        (lambda d: d["comments"][0].update(event_id="nope"), "comments[0]: this conversation has no event 'nope'"),
        (
            lambda d: d["comments"][0].update(body="x" * 20_001),
            "comments[0]: 'body' is 20,001 characters, over the limit",
        ),
        (lambda d: d["verdicts"][0].update(verdict="maybe"), "verdicts[0]: 'verdict' must be one of"),
    ],
)
def test_a_bad_reviews_file_refuses_the_import_naming_it(user_client, reviewed, tmp_path, change, named):
    source = zipfile.ZipFile(io.BytesIO(body(user_client.get(f"{reviewed.get_absolute_url()}export.zip"))))
    name = f"{reviewed.conversation_id}/reviews.json"
    data = json.loads(source.read(name))
    change(data)
    path = tmp_path / "bad.zip"
    with zipfile.ZipFile(path, "w") as target:
        for n in source.namelist():
            target.writestr(n, json.dumps(data) if n == name else source.read(n))
    Conversation.objects.all().delete()
    with pytest.raises(ImportFailed) as refused:
        import_paths([(path, "bad.zip")])
    assert any(
        f"bad.zip/{reviewed.conversation_id}/reviews.json: " in p and named in p for p in refused.value.problems
    ), refused.value.problems
    assert not Conversation.objects.exists() and not Comment.objects.exists()


def markdown_export(client: Client, conversation: Conversation, leaf: str, base: str | None = None) -> str:
    url = f"{base or conversation.get_absolute_url()}export/"
    response = client.get(url, {"format": "markdown", "leaf": leaf})
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode() if response.streaming else response.content.decode()


def test_the_markdown_export_of_a_branch_has_its_threads_at_their_events(user_client, reviewed):
    leaves = [n["id"] for n in reviewed.skeleton["nodes"] if n["leaf"]]
    other = next(leaf for leaf in leaves if leaf != reviewed.skeleton["head"])
    url = f"{reviewed.get_absolute_url()}comments/"
    user_client.post(url, {"event_id": other, "leaf": other, "body": "only on the other branch"})
    text = markdown_export(user_client, reviewed, reviewed.skeleton["head"])
    turns = text[text.index("## Turns") :]
    first_turn_end = turns.index("### 2.")
    assert "**Comment by reviewer-lead" in turns[:first_turn_end]
    assert "labels: root cause · resolved" in turns[:first_turn_end]
    assert "```markdown\n  **why** here?\n  ```" in turns[:first_turn_end]
    assert "**Reply by reviewer-lead" in turns[:first_turn_end]
    assert "only on the other branch" not in text
    assert "only on the other branch" in markdown_export(user_client, reviewed, other)


def test_a_read_only_links_markdown_export_has_no_threads(reviewed):
    share = ShareLink.objects.create(conversation=reviewed)
    assert "Comment by" not in markdown_export(Client(), reviewed, reviewed.skeleton["head"], share.get_absolute_url())
    commenting = ShareLink.objects.create(conversation=reviewed, can_comment=True)
    assert "Comment by" in markdown_export(Client(), reviewed, reviewed.skeleton["head"], commenting.get_absolute_url())


# manage.py export_reviews


def export_reviews(*args: str) -> str:
    out = io.StringIO()
    call_command("export_reviews", *args, stdout=out)
    return out.getvalue()


def test_export_reviews_writes_every_comment_label_and_verdict_with_its_instance(user_client, reviewed):
    run_import(EVALUATION, "--run", "safety gpt-4o")
    instance = Instance.objects.get(instance_id="safety-misconfig")
    event = instance.conversation.events.get(seq=0).event_id
    user_client.post(
        f"{instance.conversation.get_absolute_url()}comments/",
        {"event_id": event, "body": "in the run", "labels": ["gave up"]},
    )
    rows = [json.loads(line) for line in export_reviews().splitlines()]
    assert sorted(r["type"] for r in rows) == ["comment", "comment", "label", "reply", "verdict"]
    (in_run,) = [r for r in rows if r["text"] == "in the run"]
    assert (in_run["run"], in_run["instance_id"], in_run["event_id"], in_run["labels"]) == (
        "safety gpt-4o",
        "safety-misconfig",
        event,
        ["gave up"],
    )
    only_run = [json.loads(line) for line in export_reviews("--run", "safety gpt-4o").splitlines()]
    assert [r["text"] for r in only_run] == ["in the run"]
    table = list(csv.DictReader(io.StringIO(export_reviews("--format", "csv", "--run", "safety gpt-4o"))))
    assert [(r["type"], r["instance_id"], r["labels"], r["text"]) for r in table] == [
        ("comment", "safety-misconfig", "gave up", "in the run")
    ]
    with pytest.raises(CommandError, match="--run nope: there is no such run"):
        export_reviews("--run", "nope")
