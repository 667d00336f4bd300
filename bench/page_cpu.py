"""CPU time of the conversation page of a 100,000-event conversation (10,000-event branch),
at HEAD and at a leaf 9,000 events deep, with where it goes (database, template, the rest).

    python bench/page_cpu.py --database-url URL [--events 100000] [--repeats 15] [--workdir DIR]

Imports the generated conversation once (kept in the database and in ``--workdir`` for the
next run), then requests each page once to read its branch, then ``--repeats`` times:
the median, minimum and maximum of this process's CPU time (``time.process_time``: the view
runs here), which a shared machine inflates much less than wall time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from common import event_at_depth, import_in_child, setup_django
from generate import generate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--active-path", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--workdir", default="/tmp/eventviewer-page-cpu")
    parser.add_argument("--share", action="store_true", help="also the same pages through a share link")
    args = parser.parse_args()

    setup_django(args.database_url, migrate=True)
    from django.template import Template
    from django.test import Client

    from eventviewer.models import Conversation

    root = Path(args.workdir)
    folder = generate(root, args.events, active_path=args.active_path)
    if not Conversation.objects.filter(conversation_id=folder.name).exists():
        print(f"... importing {args.events:,} events", file=sys.stderr)
        import_in_child(folder, args.database_url)
    conversation = Conversation.objects.get(conversation_id=folder.name)
    depth = min(9000, conversation.head_path_length * 9 // 10)
    leaf = event_at_depth(folder.name, depth)

    template_s, depth_of = [0.0], [0]
    render = Template.render

    def timed_render(self, context):  # type: ignore[no-untyped-def]
        depth_of[0] += 1
        started = time.process_time()
        try:
            return render(self, context)
        finally:
            depth_of[0] -= 1
            if not depth_of[0]:  # the outermost template: includes are inside it
                template_s[0] += time.process_time() - started

    page = conversation.get_absolute_url()
    urls = {"HEAD": page, f"leaf at {depth}": f"{page}?leaf={leaf}"}
    if args.share:
        from eventviewer.models import ShareLink

        share = ShareLink.objects.filter(conversation=conversation).first() or ShareLink.objects.create(
            conversation=conversation
        )
        base = share.get_absolute_url()
        urls |= {"share HEAD": base, f"share leaf at {depth}": f"{base}?leaf={leaf}"}
    client = Client()
    for label, url in urls.items():
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        cpus, templates = [], []
        for _ in range(args.repeats):
            template_s[0] = 0.0
            Template.render = timed_render  # type: ignore[method-assign]
            started = time.process_time()
            response = client.get(url)
            cpus.append((time.process_time() - started) * 1000)
            Template.render = render  # type: ignore[method-assign]
            templates.append(template_s[0] * 1000)
            assert response.status_code == 200
        print(
            f"{label:>16}: CPU median {statistics.median(cpus):.1f} ms (min {min(cpus):.1f}, max {max(cpus):.1f}),"
            f" template {statistics.median(templates):.1f} ms, {len(response.content) / 1e6:.2f} MB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
