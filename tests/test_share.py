"""Changing HEAD, and share links: who can see and do what."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from eventviewer.models import Conversation, ShareLink

from .conftest import text_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def branching(imported):
    return imported("branching-retries")


@pytest.fixture
def other_leaf(branching):
    return next(n["id"] for n in branching.skeleton["nodes"] if n["leaf"] and not n["head"])


def share_for(conversation, **fields) -> ShareLink:
    return ShareLink.objects.create(conversation=conversation, **fields)


# HEAD


def test_a_logged_in_user_makes_a_branch_the_default(user_client, branching, other_leaf):
    response = user_client.post(f"{branching.get_absolute_url()}head/", {"leaf": other_leaf})
    assert response.status_code == 302
    branching.refresh_from_db()
    assert branching.head.event_id == other_leaf
    assert branching.skeleton["head"] == other_leaf
    html = user_client.get(branching.get_absolute_url()).content.decode()
    assert html.count('id="event-') == branching.head_path_length


def test_head_changes_need_a_login_and_a_csrf_token(client, branching, other_leaf, user, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = False
    assert client.post(f"{branching.get_absolute_url()}head/", {"leaf": other_leaf}).status_code == 302
    branching.refresh_from_db()
    assert branching.head.event_id != other_leaf
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.post(f"{branching.get_absolute_url()}head/", {"leaf": other_leaf}).status_code == 403


def test_head_is_not_changed_by_get(user_client, branching, other_leaf):
    assert user_client.get(f"{branching.get_absolute_url()}head/", {"leaf": other_leaf}).status_code == 405


def test_head_must_name_an_event_of_this_conversation(user_client, branching):
    assert user_client.post(f"{branching.get_absolute_url()}head/", {"leaf": "nope"}).status_code == 404
    assert user_client.post(f"{branching.get_absolute_url()}head/", {}).status_code == 400


# Creating and revoking share links


def test_a_logged_in_user_creates_a_share_link_for_a_branch_and_event(user_client, branching, other_leaf):
    focus = branching.events.get(seq=1).event_id
    response = user_client.post(
        f"{branching.get_absolute_url()}share/",
        {"leaf": other_leaf, "focus": focus, "expires": "7d", "note": "look here"},
    )
    assert response.status_code == 302
    share = ShareLink.objects.get()
    assert (share.leaf_event_id, share.focus_event_id, share.note) == (other_leaf, focus, "look here")
    assert len(share.token) >= 43  # 32 random bytes, url-safe base64
    assert timedelta(days=6) < share.expires_at - timezone.now() <= timedelta(days=7)
    page = user_client.get(branching.get_absolute_url()).content.decode()
    assert f"/s/{share.token[:10]}" in page and "Revoke" in page


def test_share_links_need_a_login(client, branching, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = False
    response = client.post(f"{branching.get_absolute_url()}share/", {"leaf": ""})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert not ShareLink.objects.exists()


def test_revoking_a_share_link(user_client, branching):
    share = share_for(branching)
    assert user_client.post(f"{branching.get_absolute_url()}share/{share.pk}/revoke/").status_code == 302
    share.refresh_from_db()
    assert share.is_revoked
    assert user_client.get(share.get_absolute_url()).status_code == 410


def test_a_share_link_of_another_conversation_cannot_be_revoked_here(user_client, branching, imported):
    other = imported("simple")
    share = share_for(other)
    assert user_client.post(f"{branching.get_absolute_url()}share/{share.pk}/revoke/").status_code == 404


# What a reviewer with a link sees (the login requirement is on)


@pytest.fixture
def reviewer(client, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    return client


def test_a_reviewer_sees_the_shared_branch_and_event(reviewer, branching, other_leaf):
    focus = branching.events.get(seq=1).event_id
    share = share_for(branching, leaf_event_id=other_leaf, focus_event_id=focus, note="check the retry")
    html = reviewer.get(share.get_absolute_url()).content.decode()
    assert f'id="event-{other_leaf}"' in html
    assert "check the retry" in html and "Shared read-only view" in html
    assert "Make this the default branch" not in html and "Share this conversation" not in html
    assert "/import/" not in html and "/admin/" not in html and 'href="/"' not in html
    assert f"/s/{share.token}/?leaf=" in html  # branch links stay inside the share


def test_a_reviewer_switches_branches_and_opens_events_and_the_diagram(reviewer, branching, other_leaf):
    share = share_for(branching)
    base = share.get_absolute_url()
    html = reviewer.get(base, {"leaf": other_leaf}).content.decode()
    assert f'id="event-{other_leaf}"' in html
    partial = reviewer.get(base, {"leaf": other_leaf}, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in partial and f"{base}?leaf=" in partial
    assert reviewer.get(f"{base}events/{other_leaf}/").status_code == 200
    svg = reviewer.get(f"{base}diagram.svg")
    assert svg.status_code == 200 and f"{base}?leaf=" in svg.content.decode()


def test_a_reviewer_reaches_nothing_else(reviewer, branching, imported, other_leaf):
    other = imported("simple")
    share = share_for(branching)
    cid = branching.conversation_id
    for url in (
        "/",
        "/import/",
        f"/c/{cid}/",
        f"/c/{other.conversation_id}/",
        "/api/conversations/",
        f"/api/conversations/{cid}/path/",
    ):
        response = reviewer.get(url)
        assert response.status_code in (302, 401), url
        if response.status_code == 302:
            assert response["Location"].startswith("/accounts/login/")
    # Another conversation's events are not reachable through this token.
    assert reviewer.get(f"{share.get_absolute_url()}events/{other.head.event_id}/").status_code == 404
    assert reviewer.get("/admin/").status_code == 302


def test_a_reviewer_cannot_write_anything(reviewer, branching, other_leaf):
    share = share_for(branching)
    cid = branching.conversation_id
    for url in (f"/c/{cid}/head/", f"/c/{cid}/share/", f"/c/{cid}/share/{share.pk}/revoke/", "/import/"):
        assert reviewer.post(url, {"leaf": other_leaf}).status_code in (302, 403), url
    assert reviewer.post(share.get_absolute_url(), {"leaf": other_leaf}).status_code == 405
    branching.refresh_from_db()
    share.refresh_from_db()
    assert branching.head.event_id != other_leaf and share.is_active and ShareLink.objects.count() == 1


@pytest.mark.parametrize(
    ("fields", "status"),
    [
        ({"revoked_at": timezone.now()}, 410),
        ({"expires_at": timezone.now() - timedelta(minutes=1)}, 410),
    ],
)
def test_revoked_and_expired_links_are_gone_and_leak_nothing(reviewer, branching, fields, status):
    share = share_for(branching, **fields)
    for url in (
        share.get_absolute_url(),
        f"{share.get_absolute_url()}diagram.svg",
        f"{share.get_absolute_url()}events/{branching.head.event_id}/",
    ):
        response = reviewer.get(url)
        html = response.content.decode()
        assert response.status_code == status
        assert "no longer valid" in html and branching.title not in html and branching.conversation_id not in html


def test_an_unknown_token_is_a_404_that_leaks_nothing(reviewer, branching):
    response = reviewer.get("/s/" + "A" * 43 + "/")
    assert response.status_code == 404 and branching.title not in response.content.decode()


def test_tokens_are_unguessable_and_distinct(branching):
    tokens = {share_for(branching).token for _ in range(50)}
    assert len(tokens) == 50 and all(len(t) >= 43 for t in tokens)


def test_deleting_a_conversation_removes_its_events_and_links(branching):
    share_for(branching)
    branching.delete()
    assert not Conversation.objects.exists() and not ShareLink.objects.exists()
    from eventviewer.models import Event

    assert not Event.objects.exists()


def test_a_focus_off_the_shared_branch_is_refused(user_client, branching, other_leaf):
    off_branch = branching.head.event_id  # HEAD's leaf is not on the other branch
    response = user_client.post(f"{branching.get_absolute_url()}share/", {"leaf": other_leaf, "focus": off_branch})
    assert response.status_code == 400 and "is not on the shared branch" in response.content.decode()
    assert not ShareLink.objects.exists()


def test_a_share_of_the_head_branch_pins_that_branch(user_client, branching):
    user_client.post(f"{branching.get_absolute_url()}share/", {"leaf": ""})
    assert ShareLink.objects.get().leaf_event_id == branching.head.event_id


def test_a_reviewer_can_go_to_the_conversations_head(reviewer, branching, other_leaf):
    share = share_for(branching, leaf_event_id=other_leaf)
    html = reviewer.get(share.get_absolute_url()).content.decode()
    assert f'href="{share.get_absolute_url()}?leaf={branching.head.event_id}"' in html


def test_importing_again_keeps_a_head_chosen_here(user_client, branching, other_leaf):
    from eventviewer.imports.importer import import_paths

    from .conftest import fixture_folder

    user_client.post(f"{branching.get_absolute_url()}head/", {"leaf": other_leaf})
    import_paths([(fixture_folder("branching-retries"), "again")])
    branching.refresh_from_db()
    assert branching.head.event_id == other_leaf


def test_the_admin_cannot_delete_single_events(admin_client, branching):
    event = branching.events.first()
    assert admin_client.post(f"/admin/eventviewer/event/{event.pk}/delete/", {"post": "yes"}).status_code == 403
    assert branching.events.filter(pk=event.pk).exists()


def test_a_new_share_link_expires_in_a_week_unless_told_otherwise(user_client, branching):
    response = user_client.post(f"{branching.get_absolute_url()}share/", {"leaf": ""})
    share = ShareLink.objects.get()
    assert timedelta(days=6, hours=23) < share.expires_at - timezone.now() <= timedelta(days=7)
    # The sender lands on the new link in the list, with its copy button.
    assert response["Location"].endswith(f"#share-link-{share.pk}")
    page = user_client.get(branching.get_absolute_url()).content.decode()
    item = page[page.index(f'id="share-link-{share.pk}"') :]
    assert f'data-copy="{share.get_absolute_url()}">Copy link</button>' in item[: item.index("</li>")]
    assert '<option value="7d" selected>' in page


def test_revoking_asks_first_and_a_get_changes_nothing(user_client, branching):
    share = share_for(branching, note="for Ana")
    url = f"{branching.get_absolute_url()}share/{share.pk}/revoke/"
    html = user_client.get(url).content.decode()
    assert "Revoke this share link?" in html and "for Ana" in html and 'method="post"' in html
    share.refresh_from_db()
    assert share.is_active
    assert user_client.post(url)["Location"].endswith("#share-ended")
    share.refresh_from_db()
    assert share.is_revoked


def test_a_revoked_link_moves_from_the_links_to_the_revoked_ones(user_client, branching):
    kept, revoked = share_for(branching, note="kept"), share_for(branching, note="to revoke")
    user_client.post(f"{branching.get_absolute_url()}share/{revoked.pk}/revoke/")
    page = user_client.get(branching.get_absolute_url()).content.decode()
    listed, ended = text_of(page, "share").split("Revoked or expired (1)")
    assert "“kept”" in listed and "“to revoke”" not in listed
    assert "“to revoke”" in ended and "revoked now" in ended and "Copy link" not in ended
    assert f'data-copy="{revoked.get_absolute_url()}"' not in page
    assert f'data-copy="{kept.get_absolute_url()}"' in page


def test_an_error_under_a_share_link_leads_back_to_it_not_to_the_list(reviewer, branching):
    share = share_for(branching)
    html = reviewer.get(f"{share.get_absolute_url()}events/nope/").content.decode()
    assert f'<a href="{share.get_absolute_url()}">Back to the shared conversation</a>' in html
    assert "Back to the conversations" not in html and 'href="/"' not in html


def test_the_senders_note_is_in_the_bar_that_stays_on_screen(reviewer, branching, other_leaf):
    share = share_for(branching, leaf_event_id=other_leaf, note="check the <b>retry</b>")
    html = reviewer.get(share.get_absolute_url()).content.decode()
    bar = html[html.index('<div class="branch-bar"') :]
    assert bar.index('class="share-note"') < bar.index('class="branch-line"')
    assert "check the &lt;b&gt;retry&lt;/b&gt;" in bar


def test_the_share_form_says_it_shares_the_whole_conversation_opened_at_the_branch(user_client, branching):
    leaf = [n["id"] for n in branching.skeleton["nodes"] if n["leaf"]][0]
    page = user_client.get(branching.get_absolute_url(), {"leaf": leaf}).content.decode()
    form = text_of(page, "share")
    assert "Create share link for this branch" not in form
    assert "The reviewer can read the whole conversation: every branch" in form
    opens_at = form[form.index("The link opens at this branch") :]
    assert branching.branch_name(leaf) in opens_at[: opens_at.index("on the event you focus")]
    assert "Share this conversation, opened at this branch" in form
    share_for(branching, leaf_event_id=leaf)
    listed = text_of(user_client.get(branching.get_absolute_url()).content.decode(), "share")
    assert f"opens at {branching.branch_name(leaf)}" in listed


# What a share link opens besides its conversation: the sub-agents below it, nothing else


@pytest.fixture
def with_subagents(db):
    from eventviewer.imports.importer import import_paths

    from .conftest import FIXTURES

    import_paths([(FIXTURES / "subagent", "subagent")])
    parent = Conversation.objects.get(conversation_id="9045bd153bf34257918dd33313c0296c")
    return parent, parent.subagents.order_by("pk").first()


def test_a_reviewer_opens_the_sub_agents_of_the_shared_conversation_and_no_other(reviewer, with_subagents, branching):
    parent, child = with_subagents
    focus = parent.events.get(seq=1).event_id
    share = share_for(parent, leaf_event_id=parent.head.event_id, focus_event_id=focus)
    base = share.get_absolute_url()
    # The link's pinned branch and event are the parent's: the sub-agent opens at its own head.
    html = reviewer.get(f"{base}sub/{child.conversation_id}/").content.decode()
    assert f'id="event-{child.head.event_id}"' in html and "Shared read-only view" in html
    assert reviewer.get(f"{base}sub/{child.conversation_id}/events/{child.head.event_id}/").status_code == 200
    # Another conversation, and the parent itself as a "sub-agent" of its own child's share.
    for other in (branching, parent):
        child_share = share_for(child) if other is parent else share
        for url in (
            f"{child_share.get_absolute_url()}sub/{other.conversation_id}/",
            f"{child_share.get_absolute_url()}sub/{other.conversation_id}/diagram.svg",
            f"{child_share.get_absolute_url()}sub/{other.conversation_id}/events/{other.head.event_id}/",
        ):
            response = reviewer.get(url)
            assert response.status_code == 404, url
            assert other.title not in response.content.decode()


def test_a_link_to_a_conversation_being_deleted_is_a_404_that_leaks_nothing(reviewer, branching):
    share = share_for(branching)
    assert reviewer.get(share.get_absolute_url()).status_code == 200
    Conversation.objects.filter(pk=branching.pk).update(deleting=True)
    for url in (share.get_absolute_url(), f"{share.get_absolute_url()}events/{branching.head.event_id}/"):
        response = reviewer.get(url)
        assert response.status_code == 404, url
        assert branching.title not in response.content.decode()
