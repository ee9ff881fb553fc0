"""Workflow prompts: orient, claim-and-start, record-evidence-and-close.

Each template names the tools to call in order. ``{{name}}`` marks an
argument; lines that use an optional argument the caller left out are dropped,
so the rendered text never shows an empty slot.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pm_core.contracts import PromptArgument, PromptSpec

_SLOT = re.compile(r"\{\{(\w+)\}\}")

ORIENT = """\
Orient yourself in this repository's pm tracker before acting on this request:

{{request}}

Scope: {{scope}}

1. Read the working context: call pm_context (or read pm://workspace/context).
2. Call pm_search with the request's key words to find items it touches.
3. pm_get the best matches; note their status, assignee, blockers and acceptance criteria.
4. Call pm_next to see what is ready and recommended.
5. Answer with: the items that matter for the request (id, title, status), what blocks \
them, and whether to continue an existing item or create a new one with pm_create.
Do not change the tracker while orienting."""

CLAIM_AND_START = """\
Start work on {{id}}:

1. pm_get {{id}} and read its description, acceptance criteria, dependencies, files and tests.
2. If a blocker is still open, stop and report it instead of starting.
3. pm_claim {{id}}. If another author holds it, stop and report who; do not pass force \
unless you were asked to take it over.
4. pm_focus {{id}} so later context ranks it first.
5. Record your plan as a note with pm_notes (add), then begin with the first step."""

RECORD_EVIDENCE_AND_CLOSE = """\
Finish {{id}} with this evidence:

{{evidence}}

1. pm_get {{id}} and check every acceptance criterion against the evidence; if one is not \
met, stop and say which.
2. Link what proves it: changed files with pm_files (add), test commands with pm_test \
(add, then run) so the result is recorded.
3. Add a comment with pm_comments summarising what was done and how it was verified.
4. pm_close {{id}} with a reason that states the outcome and cites the evidence.
5. pm_release {{id}} if you still hold it, then call pm_next for what comes after."""


def render_template(
    template: str, args: Mapping[str, str], arguments: Sequence[PromptArgument], name: str
) -> str:
    """Fill ``template``; ValueError naming any missing required argument."""
    values = {k: v for k, v in args.items() if isinstance(v, str) and v.strip()}
    missing = [a.name for a in arguments if a.required and a.name not in values]
    if missing:
        raise ValueError(f"prompt {name} is missing required argument(s): {', '.join(missing)}")
    kept = [
        line
        for line in template.splitlines()
        if all(slot in values for slot in _SLOT.findall(line))
    ]
    text = _SLOT.sub(lambda m: values[m.group(1)].strip(), "\n".join(kept))
    # A dropped line can leave two blank lines in a row; keep paragraphs single-spaced.
    return re.sub(r"\n{3,}", "\n\n", text)


def _spec(
    name: str,
    description: str,
    template: str,
    arguments: tuple[PromptArgument, ...],
    *,
    mutates: bool = False,
) -> PromptSpec:
    def render(args: Mapping[str, str]) -> str:
        return render_template(template, args, arguments, name)

    return PromptSpec(
        name=name, description=description, arguments=arguments, render=render, mutates=mutates
    )


def prompt_specs() -> list[PromptSpec]:
    """The three workflow prompts."""
    return [
        _spec(
            "orient",
            "Orient in the tracker for a request: context, related items, what is next.",
            ORIENT,
            (
                PromptArgument("request", "What you were asked to do.", required=True),
                PromptArgument("scope", "Optional area, epic or path to focus on."),
            ),
        ),
        _spec(
            "claim-and-start",
            "Check, claim and focus an item, then start work on it.",
            CLAIM_AND_START,
            (PromptArgument("id", "The item to start.", required=True),),
            mutates=True,
        ),
        _spec(
            "record-evidence-and-close",
            "Check acceptance criteria, link evidence, close and release an item.",
            RECORD_EVIDENCE_AND_CLOSE,
            (
                PromptArgument("id", "The item to close.", required=True),
                PromptArgument("evidence", "What proves the work is done.", required=True),
            ),
            mutates=True,
        ),
    ]
