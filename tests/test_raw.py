"""What eventviewer shows as raw is exactly what it stored: the event page's raw JSON,
its download, and markdown that is too big to render."""

from __future__ import annotations

import json

import pytest
from django.utils.html import escape

from eventviewer.imports.importer import import_paths
from eventviewer.templatetags.eventviewer import markdown

from .conftest import message, write_folder

pytestmark = pytest.mark.django_db

# Formatting, key order, a number no float holds, and text beyond ASCII: a
# re-serialisation would change every one of them.
RAW = (
    '{"id": "e1",  "kind": "MessageEvent", "source": "user", "timestamp": "2026-01-01T00:00:00",\n'
    '  "llm_message": {"role": "user", "content": [{"type": "text", "text": "h\\u00e9llo <b>"}]},\n'
    '  "big": 123456789012345678901234567890, "float": 1.10, "z": "é"}'
)


@pytest.fixture
def stored(tmp_path, open_site):
    folder = write_folder(tmp_path, [])
    (folder / "events" / "event-00000-e1.json").write_text(RAW + "\n", encoding="utf-8")
    (result,) = import_paths([(folder, "raw")])
    return result.conversation


def test_the_event_page_shows_the_stored_bytes_verbatim(client, stored):
    page = client.get(f"{stored.get_absolute_url()}events/e1/").content.decode()
    assert escape(RAW) in page
    assert "1.2345678901234568e+29" not in page


def test_the_raw_download_is_the_stored_bytes(client, stored):
    response = client.get(f"{stored.get_absolute_url()}events/e1/raw.json")
    assert response.status_code == 200
    assert response.content == RAW.encode()
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == 'attachment; filename="e1.json"'
    assert client.get(f"{stored.get_absolute_url()}events/e2/raw.json").status_code == 404


def test_a_big_event_shows_its_start_and_offers_the_rest_as_a_download(client, stored, settings):
    settings.EVENTVIEWER_RAW_SHOWN_BYTES = 40
    page = client.get(f"{stored.get_absolute_url()}events/e1/").content.decode()
    assert escape(RAW[:40]) + "</pre>" in page
    assert RAW[40:60] not in page
    assert "download the whole event" in page
    assert f'href="{stored.get_absolute_url()}events/e1/raw.json"' in page


def test_a_reviewer_downloads_raw_json_through_the_share_link(client, stored, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    share = stored.share_links.create()
    response = client.get(f"{share.get_absolute_url()}events/e1/raw.json")
    assert response.status_code == 200 and response.content == RAW.encode()
    page = client.get(f"{share.get_absolute_url()}events/e1/").content.decode()
    assert f'href="{share.get_absolute_url()}events/e1/raw.json"' in page
    # Without the link, nothing.
    assert client.get(f"{stored.get_absolute_url()}events/e1/raw.json").status_code == 302
    stored.share_links.update(revoked_at="2026-01-01T00:00:00Z")
    assert client.get(f"{share.get_absolute_url()}events/e1/raw.json").status_code == 410


def test_an_event_named_dot_dot_has_a_raw_download(client, tmp_path, open_site):
    folder = write_folder(tmp_path, [message("..", None, "hi")])
    (result,) = import_paths([(folder, "dots")])
    response = client.get(f"{result.conversation.get_absolute_url()}events/raw.json?id=..")
    assert response.status_code == 200 and json.loads(response.content)["id"] == ".."


def test_markdown_above_the_size_limit_is_plain_escaped_text(settings):
    settings.EVENTVIEWER_MARKDOWN_MAX_CHARS = 50
    small = markdown("**bold** <script>x</script>")
    assert "<strong>bold</strong>" in small and "<script>" not in small
    big = markdown("**bold** <script>x</script> " + "[" * 60)
    assert "<strong>" not in big and "**bold** &lt;script&gt;x&lt;/script&gt;" in big
    assert big.startswith('<pre class="wrap plain-text">')
