"""Evaluation runs: the list of runs, one run's instances, and two runs compared."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.core.paginator import Page, Paginator
from django.db.models import Count, F, Q, QuerySet
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from eventviewer.forms import RunCompareForm, RunForm, RunsCompareForm
from eventviewer.lookups import checked
from eventviewer.models import Instance, Label, Run, Verdict
from eventviewer.scope import event_path
from eventviewer.templatetags.eventviewer import dollars, duration
from eventviewer.trajectory import charts, patterns, runs
from eventviewer.trajectory.agreement import MIN_OVERLAP, Agreement, agreement
from eventviewer.views import HtmxHttpRequest, is_partial
from eventviewer.views.columns import sortable
from eventviewer.views.comments import REVIEW_COLUMNS, filtered_by_reviews, review_marks, reviewing, with_review_counts

SHOWN = Q(instances__conversation__deleting=False)  # a conversation being deleted is shown nowhere
RUN_COLUMNS = [
    ("instance", "Instance"),
    ("outcome", "Outcome"),
    ("problems", "Problems"),
    ("failures", "Failures"),
    ("comments", "Comments"),
    ("labels", "Labels"),
    ("verdicts", "Verdicts"),
    ("turns", "Turns"),
    ("tokens", "Tokens"),
    ("cost", "Cost"),
    ("duration", "Duration"),
    ("failure", "First failure"),
]


def run_totals(shown: QuerySet[Instance]) -> runs.Totals:
    """The totals of these instances: one small row each, read once."""
    rows = shown.values_list(
        "outcome",
        "turns",
        "conversation__prompt_tokens",
        "conversation__completion_tokens",
        "conversation__cost",
        "conversation__duration",
        "conversation__pending_count",
        "conversation__mismatch_count",
    )
    return runs.totals(
        runs.Figures(
            outcome,
            tokens=None if prompt is None and completion is None else (prompt or 0) + (completion or 0),
            cost=cost,
            duration=duration,
            turns=turns,
            problems=pending + mismatched,
        )
        for outcome, turns, prompt, completion, cost, duration, pending, mismatched in rows.iterator()
    )


CHARTED = [("turns", "turns"), ("cost", "conversation__cost"), ("duration", "conversation__duration")]
CHART_FORMATS: dict[str, Callable[[float], str]] = {
    "turns": lambda v: f"{v:,.0f}",
    "cost": dollars,
    "duration": duration,
}


def _charts(shown: QuerySet[Instance], form: RunForm) -> list[tuple[str, str]]:
    """A bar chart per figure, each bar a link to the table filtered to its range."""
    rows = list(shown.values_list("outcome", *(column for _, column in CHARTED)))
    query = {k: v for k, v in form.data.items() if k not in ("page",) and v}
    found = []
    for i, (name, _) in enumerate(CHARTED):
        shown_as = CHART_FORMATS[name]
        counted = charts.bars(((r[0], r[i + 1]) for r in rows), runs.OUTCOMES, whole=name == "turns")
        if not counted:
            continue

        def link(bar: charts.Bar, name: str = name) -> str:
            return "?" + urlencode(query | {name: f"{bar.low!r}:{bar.high!r}"})

        def label(bar: charts.Bar, shown_as: Callable[[float], str] = shown_as) -> str:
            split = ", ".join(f"{n} {runs.OUTCOME_LABELS[o]}" for o, n in bar.counts.items() if n)
            return f"{shown_as(bar.low)} to {shown_as(bar.high)}: {bar.total} instances ({split})"

        found.append((name.capitalize(), charts.svg(f"{name.capitalize()} per instance", counted, link, label)))
    return found


def _links(run: Run, instance_ids: list[str]) -> dict[str, str]:
    """Instance id -> its conversation's page, for these instances of ``run``."""
    link = reverse("eventviewer:conversation", args=["-"])
    rows = run.instances.filter(instance_id__in=instance_ids).values_list(
        "instance_id", "conversation__conversation_id"
    )
    return {i: link.replace("/-/", f"/{cid}/") for i, cid in rows}


AGREEMENT_PAIRS = 45  # the pairs of reviewers the table shows at most: ten reviewers'


def run_agreement(shown: QuerySet[Instance]) -> Agreement:
    """How the reviewers of these instances agree: every verdict on them, read once."""
    verdicts = Verdict.objects.filter(conversation__in=shown.values("pk"))
    return agreement(verdicts.values_list("conversation_id", "reviewer", "outcome").iterator())


@require_safe
def run_list(request: HtmxHttpRequest) -> HttpResponse:
    found = Run.objects.annotate(
        instance_count=Count("instances", filter=SHOWN),
        resolved=Count("instances", filter=SHOWN & Q(instances__outcome=runs.RESOLVED)),
    ).order_by("-imported_at", "-pk")  # newest first, the later of two at one moment first
    return render(request, "runs/list.html", {"runs": found})


@require_safe
@vary_on_headers("HX-Request")
def run_detail(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    run = get_object_or_404(Run, slug=slug)
    form = checked(RunForm(request.GET))
    q, outcome = form.cleaned_data["q"].strip(), form.cleaned_data["outcome"]
    pattern, pending = form.cleaned_data["pattern"], form.cleaned_data["pending"]
    shown = run.instances.filter(conversation__deleting=False)
    instances = shown.annotate(
        problems=F("conversation__pending_count") + F("conversation__mismatch_count"),
        tokens=F("conversation__prompt_tokens") + F("conversation__completion_tokens"),
    )
    counts = dict(shown.values_list("outcome").annotate(n=Count("pk")).values_list("outcome", "n"))
    totals = run_totals(shown)
    if q:
        instances = instances.filter(instance_id__icontains=q)
    if outcome:
        instances = instances.filter(outcome=outcome)
    if pattern:
        instances = instances.filter(pattern=pattern)
    if pending:
        instances = instances.filter(problems__gt=0)
    instances = with_review_counts(filtered_by_reviews(instances, form.cleaned_data))
    for name, column in CHARTED:
        if form.cleaned_data[name]:
            low, high = form.cleaned_data[name]
            instances = instances.filter(**{f"{column}__gte": low, f"{column}__lt": high})
    found_patterns = patterns.grouped(
        shown.exclude(pattern="").exclude(pattern__isnull=True).values_list("instance_id", "pattern"), totals.instances
    )
    # Plain rows, each with its link made here: model instances and a reverse() per row
    # cost more than the rest of the page.
    rows = instances.order_by(*form.ordering()).values(
        "pk",
        "instance_id",
        "outcome",
        "error",
        "failures",
        "turns",
        "problems",
        "tokens",
        "first_failure",
        "first_failure_kind",
        "first_failure_tool",
        "first_failure_text",
        "comment_open",
        "comment_total",
        "label_count",
        "verdict_count",
        cid=F("conversation__conversation_id"),
        cost=F("conversation__cost"),
        duration=F("conversation__duration"),
    )
    # Page[Any]: its object_list is replaced below by the rows it shows, each with its links.
    page: Page[Any] = Paginator(rows, settings.EVENTVIEWER_LIST_PAGE_SIZE).get_page(form.cleaned_data["page"] or 1)
    page.object_list = list(page.object_list)
    link = reverse("eventviewer:conversation", args=["-"])
    sort, direction = form.sorted_by()
    review_columns = reviewing(form.cleaned_data, sort)
    marks = review_marks([row["pk"] for row in page.object_list]) if review_columns else {}
    for row in page.object_list:
        row["review_labels"], row["review_verdicts"] = marks.get(row["pk"], ([], []))
        row["url"] = link.replace("/-/", f"/{row['cid']}/")
        if row["first_failure"]:
            row["failure_url"] = row["url"] + event_path(row["first_failure"])
        row["label"] = runs.OUTCOME_LABELS.get(row["outcome"], row["outcome"])
    examples = _links(run, [i for p in found_patterns for i in p.examples])
    shown_columns = [c for c in RUN_COLUMNS if review_columns or c[0] not in REVIEW_COLUMNS]
    columns = sortable(shown_columns, sort, direction, ascending=form.ASCENDING, text=form.ASCENDING)
    agreed = run_agreement(shown)
    context = {
        "run": run,
        "model": runs.model_of(run.metadata, None),
        "page": page,
        "q": q,
        "outcome": outcome,
        "pattern": pattern,
        "pending": pending,
        "ranges": [(name, request.GET[name]) for name, _ in CHARTED if form.cleaned_data[name]],
        "patterns": [(p, [(i, examples.get(i, "")) for i in p.examples]) for p in found_patterns],
        "sort": sort,
        "dir": direction,
        "columns": columns,
        "outcomes": [(key, runs.OUTCOME_LABELS[key], counts.get(key, 0)) for key in runs.OUTCOMES],
        "total": sum(counts.values()),
        "totals": totals,
        # Built from numbers, our outcome names and escaped links (trajectory.charts).
        "charts": [(title, mark_safe(svg)) for title, svg in _charts(shown, form)],
        "others": Run.objects.exclude(pk=run.pk).only("name", "slug"),
        "reviewing": review_columns,
        "params": form.cleaned_data,
        "labels": Label.objects.values_list("name", flat=True),
        "verdict_choices": RunForm.VERDICTS,
        "comment_choices": RunForm.COMMENTS,
        "agreement": agreed,
        "agreement_pairs": agreed.pairs[:AGREEMENT_PAIRS],
        "agreement_more": max(0, len(agreed.pairs) - AGREEMENT_PAIRS),
        "min_overlap": MIN_OVERLAP,
    }
    if is_partial(request):
        return render(request, "runs/detail.html#instances", context)
    return render(request, "runs/detail.html", context)


SIDE_FIELDS = ("outcome", "turns", "tokens", "cost", "first_failure_kind", "first_failure_tool", "first_failure_text")


def sides_of(a: Run, b: Run, instance_ids: list[str] | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """Instance id -> "a" / "b" -> that run's row of it (only of ``instance_ids`` if given)."""
    rows = Instance.objects.filter(run__in=[a, b], conversation__deleting=False)
    if instance_ids is not None:
        rows = rows.filter(instance_id__in=instance_ids)
    rows = rows.annotate(tokens=F("conversation__prompt_tokens") + F("conversation__completion_tokens")).values(
        "run_id",
        "instance_id",
        "first_failure",
        *SIDE_FIELDS,
        cost=F("conversation__cost"),
        cid=F("conversation__conversation_id"),
        head=F("conversation__head__event_id"),
    )
    link = reverse("eventviewer:conversation", args=["-"])
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows.iterator():
        row["url"] = link.replace("/-/", f"/{row['cid']}/")
        row["label"] = runs.OUTCOME_LABELS.get(row["outcome"], row["outcome"])
        found.setdefault(row["instance_id"], {})["a" if row["run_id"] == a.pk else "b"] = row
    return found


def outcomes_of(shown: list[Run]) -> dict[int, dict[str, str]]:
    """Run pk -> instance id -> outcome: three small fields an instance, one read."""
    found: dict[int, dict[str, str]] = {r.pk: {} for r in shown}
    rows = Instance.objects.filter(run__in=shown, conversation__deleting=False).values_list(
        "run_id", "instance_id", "outcome"
    )
    for run_id, instance_id, outcome in rows.iterator():
        found[run_id][instance_id] = outcome
    return found


def _runs_compare(request: HtmxHttpRequest) -> HttpResponse:
    """``?runs=a,b,c``: one outcome column per run, the most disagreed-on instances first."""
    params = checked(RunsCompareForm(request.GET)).cleaned_data
    found = {r.slug: r for r in Run.objects.filter(slug__in=params["runs"])}
    for slug in params["runs"]:
        if slug not in found:
            raise Http404(f"There is no run {slug!r}.")
    shown = [found[slug] for slug in params["runs"]]
    by_run = outcomes_of(shown)
    outcomes = {i: [by_run[r.pk].get(i) for r in shown] for i in sorted(set().union(*by_run.values()))}
    order = runs.by_disagreement(outcomes)
    # Page[Any]: its object_list is replaced below by the rows it shows, each with its links.
    page: Page[Any] = Paginator(order, settings.EVENTVIEWER_LIST_PAGE_SIZE).get_page(params["page"] or 1)
    ids = list(page.object_list)
    links: dict[tuple[int, str], str] = {}
    link = reverse("eventviewer:conversation", args=["-"])
    cids = Instance.objects.filter(run__in=shown, instance_id__in=ids).values_list(
        "run_id", "instance_id", "conversation__conversation_id"
    )
    for run_id, instance_id, cid in cids:
        links[run_id, instance_id] = link.replace("/-/", f"/{cid}/")
    page.object_list = [
        {
            "instance_id": i,
            "split": runs.disagreement(outcomes[i])[0],
            "cells": [
                (r, o, runs.OUTCOME_LABELS.get(o, o) if o else "", links.get((r.pk, i), ""))
                for r, o in zip(shown, outcomes[i], strict=True)
            ],
        }
        for i in ids
    ]
    context = {"runs": shown, "page": page, "total": len(order)}
    if is_partial(request):
        return render(request, "runs/heat.html#heat-table", context)
    return render(request, "runs/heat.html", context)


@require_safe
@vary_on_headers("HX-Request")
def run_compare(request: HtmxHttpRequest) -> HttpResponse:
    if "runs" in request.GET:
        return _runs_compare(request)
    form = checked(RunCompareForm(request.GET))
    params = form.cleaned_data
    a = get_object_or_404(Run, slug=params["a"])
    b = get_object_or_404(Run, slug=params["b"])
    # The changes from the outcomes alone; the rows of the shown page only, then.
    outcomes = outcomes_of([a, b])
    found = runs.changes(outcomes[a.pk], outcomes[b.pk])
    counts = {c: 0 for c in runs.CHANGES}
    for c in found.values():
        counts[c] += 1
    wanted = params["change"]
    listed = [i for i, c in found.items() if c == wanted] if wanted else list(found)
    # Page[Any]: its object_list is replaced below by the rows it shows, each with its links.
    page: Page[Any] = Paginator(listed, settings.EVENTVIEWER_LIST_PAGE_SIZE).get_page(params["page"] or 1)
    sides = sides_of(a, b, list(page.object_list))
    both = reverse("eventviewer:compare-conversations")
    rows = []
    for instance_id in page.object_list:
        c = found[instance_id]
        side_a, side_b = sides[instance_id].get("a"), sides[instance_id].get("b")
        pair = ""
        if side_a and side_b and side_a["head"] and side_b["head"]:
            ends = {"a": f"{side_a['cid']}:{side_a['head']}", "b": f"{side_b['cid']}:{side_b['head']}"}
            pair = f"{both}?{urlencode(ends)}"
        rows.append(
            {
                "instance_id": instance_id,
                "change": c,
                "label": runs.CHANGE_LABELS[c],
                "sides": [("A", side_a), ("B", side_b)],
                "pair": pair,
            }
        )
    page.object_list = rows
    totals_a = run_totals(a.instances.filter(conversation__deleting=False))
    totals_b = run_totals(b.instances.filter(conversation__deleting=False))
    paired = {i: c for i, c in found.items() if c not in (runs.ONLY_A, runs.ONLY_B)}
    context = {
        "a": a,
        "b": b,
        "change": wanted,
        "changes": [(c, runs.CHANGE_LABELS[c], counts[c]) for c in runs.CHANGES],
        "total": len(found),
        "page": page,
        "totals": (totals_a, totals_b),
        "rate_difference": None
        if totals_a.resolve_rate is None or totals_b.resolve_rate is None
        else totals_b.resolve_rate - totals_a.resolve_rate,
        "cost_difference": totals_b.cost.total - totals_a.cost.total,
        "tokens_difference": totals_b.tokens.total - totals_a.tokens.total,
        "paired": len(paired),
        "mcnemar_p": runs.mcnemar_p(paired),
    }
    if is_partial(request):
        return render(request, "runs/compare.html#instances", context)
    return render(request, "runs/compare.html", context)
