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

#: A step: its text, and the tools it names (dropped when one is not callable; the
#: next alternative with the same number, if any, is used instead).
Step = tuple[str, tuple[str, ...]]

ORIENT: tuple[str, tuple[Step | tuple[Step, ...], ...], str] = (
    "Orient yourself in this repository's pm tracker before acting on this request:\n\n"
    "{{request}}\n\nScope: {{scope}}",
    (
        (
            (
                "Read the working context: call pm_context (or read pm://workspace/context).",
                ("pm_context",),
            ),
            ("Read the working context at pm://workspace/context.", ()),
        ),
        ("Call pm_search with the request's key words to find items it touches.", ("pm_search",)),
        (
            "pm_get the best matches; note their status, assignee, blockers and acceptance "
            "criteria.",
            ("pm_get",),
        ),
        ("Call pm_next to see what is ready and recommended.", ("pm_next",)),
        (
            "Answer with: the items that matter for the request (id, title, status), what blocks "
            "them, and whether to continue an existing item or create a new one with pm_create.",
            ("pm_create",),
        ),
    ),
    "Do not change the tracker while orienting.",
)

CLAIM_AND_START: tuple[str, tuple[Step | tuple[Step, ...], ...], str] = (
    "Start work on {{id}}:",
    (
        (
            "pm_get {{id}} and read its description, acceptance criteria, dependencies, files "
            "and tests.",
            ("pm_get",),
        ),
        ("If a blocker is still open, stop and report it instead of starting.", ()),
        (
            "pm_claim {{id}}. If another author holds it, stop and report who; do not pass force "
            "unless you were asked to take it over.",
            ("pm_claim",),
        ),
        ("pm_focus {{id}} so later context ranks it first.", ("pm_focus",)),
        (
            (
                "Record your plan as a note with pm_notes (add), then begin with the first step.",
                ("pm_notes",),
            ),
            (
                "Record your plan in the item with pm_update (options.body), then begin with the "
                "first step.",
                ("pm_update",),
            ),
            ("Begin with the first step.", ()),
        ),
    ),
    "",
)

RECORD_EVIDENCE_AND_CLOSE: tuple[str, tuple[Step | tuple[Step, ...], ...], str] = (
    "Finish {{id}} with this evidence:\n\n{{evidence}}",
    (
        (
            "pm_get {{id}} and check every acceptance criterion against the evidence; if one is "
            "not met, stop and say which.",
            ("pm_get",),
        ),
        ("Link the changed files with pm_files (add).", ("pm_files",)),
        (
            "Link test commands with pm_test (add, then run) so the result is recorded.",
            ("pm_test",),
        ),
        (
            "Add a comment with pm_comments summarising what was done and how it was verified.",
            ("pm_comments",),
        ),
        (
            (
                "pm_close {{id}} with a reason that states the outcome, cites the evidence and "
                "names the files and tests that prove it.",
                ("pm_close",),
            ),
            (
                "Report the outcome and the evidence: the tools this server offers cannot close "
                "{{id}} (closing needs the core profile or wider).",
                (),
            ),
        ),
        (
            "pm_release {{id}} if you still hold it, then call pm_next for what comes after.",
            ("pm_release", "pm_next"),
        ),
    ),
    "",
)

Template = tuple[str, tuple[Step | tuple[Step, ...], ...], str]


def steps_for(template: Template, tools: frozenset[str] | None) -> str:
    """The template as text, naming only ``tools`` (``None``: every step)."""
    head, steps, tail = template
    lines: list[str] = []
    for step in steps:
        options: tuple[Step, ...] = step if isinstance(step[0], tuple) else (step,)
        chosen = next(
            (text for text, needs in options if tools is None or set(needs) <= tools), None
        )
        if chosen is not None:
            lines.append(f"{len(lines) + 1}. {chosen}")
    return "\n\n".join(part for part in (head, "\n".join(lines), tail) if part)


def render_template(
    template: Template,
    args: Mapping[str, str],
    arguments: Sequence[PromptArgument],
    name: str,
    tools: frozenset[str] | None = None,
) -> str:
    """Fill ``template`` for a client that can call ``tools``; ValueError naming a missing argument."""
    values = {k: v for k, v in args.items() if isinstance(v, str) and v.strip()}
    missing = [a.name for a in arguments if a.required and a.name not in values]
    if missing:
        raise ValueError(f"prompt {name} is missing required argument(s): {', '.join(missing)}")
    kept = [
        line
        for line in steps_for(template, tools).splitlines()
        if all(slot in values for slot in _SLOT.findall(line))
    ]
    text = _SLOT.sub(lambda m: values[m.group(1)].strip(), "\n".join(kept))
    # A dropped line can leave two blank lines in a row; keep paragraphs single-spaced.
    return re.sub(r"\n{3,}", "\n\n", text)


def _spec(
    name: str,
    description: str,
    template: Template,
    arguments: tuple[PromptArgument, ...],
    *,
    mutates: bool = False,
) -> PromptSpec:
    def render(args: Mapping[str, str]) -> str:
        return render_template(template, args, arguments, name)

    def render_for(args: Mapping[str, str], tools: frozenset[str]) -> str:
        return render_template(template, args, arguments, name, tools)

    return PromptSpec(
        name=name,
        description=description,
        arguments=arguments,
        render=render,
        render_for=render_for,
        mutates=mutates,
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
