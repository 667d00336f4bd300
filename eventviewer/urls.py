from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from eventviewer import api, views

app_patterns = [
    path("", views.conversation_list, name="conversation-list"),
    path("import/", views.import_upload, name="import"),
    path("c/<str:conversation_id>/", views.conversation, name="conversation"),
    path("c/<str:conversation_id>/diagram.svg", views.diagram_svg, name="diagram"),
    path("c/<str:conversation_id>/events/<path:event_id>/", views.event_detail, name="event"),
    path("c/<str:conversation_id>/events/", views.event_detail, name="event-by-query"),  # ?id=. or ?id=..
    path("c/<str:conversation_id>/head/", views.set_head, name="set-head"),
    path("c/<str:conversation_id>/share/", views.share_create, name="share-create"),
    path("c/<str:conversation_id>/share/<int:pk>/revoke/", views.share_revoke, name="share-revoke"),
    path("s/<str:token>/", views.shared_conversation, name="share"),
    path("s/<str:token>/diagram.svg", views.shared_diagram, name="share-diagram"),
    path("s/<str:token>/events/<path:event_id>/", views.shared_event, name="share-event"),
    path("s/<str:token>/events/", views.shared_event, name="share-event-by-query"),
    path("api/conversations/", api.conversations, name="api-conversations"),
    path("api/conversations/<str:conversation_id>/path/", api.path, name="api-path"),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico on pages that do not name an icon (the admin's).
    path("favicon.ico", views.favicon),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include((app_patterns, "eventviewer"))),
]
handler400 = "eventviewer.views.bad_request"
handler403 = "eventviewer.views.permission_denied"
handler404 = "eventviewer.views.page_not_found"
handler500 = "eventviewer.views.server_error"
