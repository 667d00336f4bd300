from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from eventviewer import api
from eventviewer.views import (
    comments,
    compare,
    conversations,
    events,
    exports,
    files,
    imports,
    live,
    queue,
    reviews,
    runs,
    search,
    share,
    site,
)

app_patterns = [
    path("", conversations.conversation_list, name="conversation-list"),
    path("export.jsonl", exports.list_export, name="conversation-export"),  # the list's query + format=
    path("review/", queue.review_queue, name="review-queue"),  # the list's query (+ reviewed=, blind=)
    path("import/", imports.import_upload, name="import"),
    path("import/<uuid:upload_id>/", imports.import_progress, name="import-progress"),
    path("c/<str:conversation_id>/", conversations.conversation, name="conversation"),
    path("c/<str:conversation_id>/diagram.svg", conversations.diagram_svg, name="diagram"),
    path("c/<str:conversation_id>/base_state.json", conversations.base_state, name="base-state"),
    path("c/<str:conversation_id>/events/<path:event_id>/raw.json", events.event_raw, name="event-raw"),
    path("c/<str:conversation_id>/events/raw.json", events.event_raw, name="event-raw-by-query"),  # ?id=..
    path("c/<str:conversation_id>/events/<path:event_id>/", events.event_detail, name="event"),
    path("c/<str:conversation_id>/events/", events.event_detail, name="event-by-query"),  # ?id=. or ?id=..
    path("c/<str:conversation_id>/compare/", compare.branch_compare, name="compare"),
    path("c/<str:conversation_id>/files/", files.branch_files, name="files"),
    path("c/<str:conversation_id>/files/diff/", files.branch_diff, name="file-diff"),  # ?event=..&file=..
    path("c/<str:conversation_id>/search/", search.conversation_search, name="search"),
    path("c/<str:conversation_id>/export.zip", exports.export_zip, name="export-zip"),
    path("c/<str:conversation_id>/export/", exports.export_branch, name="export"),
    path("c/<str:conversation_id>/head/", conversations.set_head, name="set-head"),
    path("c/<str:conversation_id>/live/", live.conversation_live, name="live"),
    path("c/<str:conversation_id>/comments/", comments.comment_create, name="comment-create"),
    path("c/<str:conversation_id>/comments/<int:pk>/", comments.comment_change, name="comment-change"),
    path("c/<str:conversation_id>/verdict/", comments.verdict_give, name="verdict"),
    path("c/<str:conversation_id>/labels/", comments.conversation_label, name="conversation-label"),
    path("c/<str:conversation_id>/delete/", conversations.delete, name="delete"),
    path("c/<str:conversation_id>/share/", share.share_create, name="share-create"),
    path("c/<str:conversation_id>/share/<int:pk>/revoke/", share.share_revoke, name="share-revoke"),
    path("s/<str:token>/", share.shared_conversation, name="share"),
    path("s/<str:token>/diagram.svg", share.shared_diagram, name="share-diagram"),
    path("s/<str:token>/events/<path:event_id>/raw.json", share.shared_event_raw, name="share-event-raw"),
    path("s/<str:token>/events/raw.json", share.shared_event_raw, name="share-event-raw-by-query"),
    path("s/<str:token>/events/<path:event_id>/", share.shared_event, name="share-event"),
    path("s/<str:token>/events/", share.shared_event, name="share-event-by-query"),
    path("s/<str:token>/compare/", compare.shared_compare, name="share-compare"),
    path("s/<str:token>/files/", files.shared_files, name="share-files"),
    path("s/<str:token>/files/diff/", files.shared_diff, name="share-file-diff"),
    path("s/<str:token>/search/", search.shared_search, name="share-search"),
    path("s/<str:token>/export.zip", exports.shared_export_zip, name="share-export-zip"),
    path("s/<str:token>/export/", exports.shared_export, name="share-export"),
    path("s/<str:token>/sub/<str:subagent>/", share.shared_conversation, name="share-subagent"),
    path("s/<str:token>/sub/<str:subagent>/diagram.svg", share.shared_diagram, name="share-subagent-diagram"),
    path("s/<str:token>/sub/<str:subagent>/events/<path:event_id>/", share.shared_event, name="share-subagent-event"),
    path("s/<str:token>/sub/<str:subagent>/events/", share.shared_event, name="share-subagent-event-by-query"),
    path("s/<str:token>/live/", live.shared_live, name="share-live"),
    path("s/<str:token>/comments/", comments.shared_comment_create, name="share-comment-create"),
    path("s/<str:token>/comments/<int:pk>/", comments.shared_comment_change, name="share-comment-change"),
    path("s/<str:token>/verdict/", comments.shared_verdict_give, name="share-verdict-give"),
    path("s/<str:token>/labels/", comments.shared_conversation_label, name="share-conversation-label"),
    path(
        "s/<str:token>/sub/<str:subagent>/labels/",
        comments.shared_conversation_label,
        name="share-subagent-conversation-label",
    ),
    path(
        "s/<str:token>/sub/<str:subagent>/comments/",
        comments.shared_comment_create,
        name="share-subagent-comment-create",
    ),
    path(
        "s/<str:token>/sub/<str:subagent>/comments/<int:pk>/",
        comments.shared_comment_change,
        name="share-subagent-comment-change",
    ),
    path("s/<str:token>/sub/<str:subagent>/verdict/", comments.shared_verdict_give, name="share-subagent-verdict-give"),
    path("s/<str:token>/api/comments/", reviews.shared_comments, name="share-comments"),
    path("s/<str:token>/sub/<str:subagent>/api/comments/", reviews.shared_comments, name="share-subagent-comments"),
    path("s/<str:token>/api/verdict/", reviews.shared_verdict, name="share-verdict"),
    path("s/<str:token>/sub/<str:subagent>/api/verdict/", reviews.shared_verdict, name="share-subagent-verdict"),
    path("s/<str:token>/sub/<str:subagent>/compare/", compare.shared_compare, name="share-subagent-compare"),
    path("s/<str:token>/sub/<str:subagent>/files/", files.shared_files, name="share-subagent-files"),
    path("s/<str:token>/sub/<str:subagent>/files/diff/", files.shared_diff, name="share-subagent-file-diff"),
    path("s/<str:token>/sub/<str:subagent>/search/", search.shared_search, name="share-subagent-search"),
    path("s/<str:token>/sub/<str:subagent>/export.zip", exports.shared_export_zip, name="share-subagent-export-zip"),
    path("s/<str:token>/sub/<str:subagent>/export/", exports.shared_export, name="share-subagent-export"),
    path("compare/", compare.conversations_compare, name="compare-conversations"),
    path("runs/", runs.run_list, name="run-list"),
    path("runs/compare/", runs.run_compare, name="run-compare"),  # ?a=<slug>&b=<slug>
    path("runs/<slug:slug>/", runs.run_detail, name="run"),
    path("runs/<slug:slug>/export.jsonl", exports.run_export, name="run-export"),  # ?format=
    path("runs/<slug:slug>/export-reviews/", exports.run_reviews, name="run-reviews"),  # ?format=jsonl|csv
    path("api/conversations/", api.conversations, name="api-conversations"),
    path("api/conversations/<str:conversation_id>/path/", api.path, name="api-path"),
    path("api/conversations/<str:conversation_id>/search/", api.search, name="api-search"),
    path("api/runs/", api.run_list, name="api-runs"),
    path("api/runs/compare/", api.run_compare, name="api-run-compare"),  # ?a=<slug>&b=<slug>
    path("api/runs/<slug:slug>/", api.run_detail, name="api-run"),
    path("api/conversations/<str:conversation_id>/comments/", reviews.conversation_comments, name="api-comments"),
    path("api/conversations/<str:conversation_id>/verdict/", reviews.conversation_verdict, name="api-verdict"),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico on pages that do not name an icon (the admin's).
    path("favicon.ico", site.favicon),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include((app_patterns, "eventviewer"))),
]
handler400 = "eventviewer.views.site.bad_request"
handler403 = "eventviewer.views.site.permission_denied"
handler404 = "eventviewer.views.site.page_not_found"
handler500 = "eventviewer.views.site.server_error"
