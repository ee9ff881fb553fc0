"""The plan group, declared: create, show, step, add-step, decision.

``PARAMS`` declares each subcommand under ``"plan <sub>"``; the CLI
(:mod:`pm_core.cli.commands.plan`) and the tool ``pm_plan`` read it. The tool
names the plan ``id`` (the parent on create) and carries each subcommand's text
(the description, a step's note, the decision) as ``text``; its ``step``
subcommand adds a step when no ``stepRef`` is given (``pm plan add-step``).
"""

from __future__ import annotations

from pm_core.params import Arg, Opt, Param

#: Step statuses, written here so a declaration imports no write path
#: (``tests/unit/test_cli_help_values.py`` checks them against ``pm_core.tracker.ops.plan``).
STEP_STATUSES = ("pending", "in_progress", "done", "skipped")
#: The subcommands ``pm_plan`` takes (``step`` without ``stepRef`` is ``add-step``).
TOOL_SUBCOMMANDS = ("show", "create", "step", "decision")
#: What the tool keys that several subcommands share mean (its schema says so).
TOOL_KEY_HELP = {
    "id": "Plan id (create: parent item).",
    "stepRef": "Step id, number or title; omit to add a step.",
    "text": "Decision; note on a step; description on create.",
    "after": "Add the step after this one.",
}

_PLAN = Arg("plan_id", tool="id", help="The plan's id.")

PARAMS: dict[str, tuple[Param, ...]] = {
    "plan show": (_PLAN,),
    "plan step": (
        _PLAN,
        Arg("step_ref", metavar="STEP", tool="stepRef", help="Step id, number or title."),
        Arg("status", choices=STEP_STATUSES, help="The step's new status."),
        Opt("--note", dest="note", tool="text", help="A note on this change."),
    ),
    "plan create": (
        Arg("title", help="The plan's title."),
        Opt(
            "--step",
            dest="steps",
            multiple=True,
            metavar="TITLE",
            tool="steps",
            help="A step, in order.",
        ),
        Opt("--parent", dest="parent", metavar="ID", tool="id", help="Parent item."),
        Opt(
            "--description",
            "-d",
            dest="description",
            default="",
            tool="text",
            help="What the plan is for.",
        ),
    ),
    "plan add-step": (
        _PLAN,
        Arg("title", help="The step's title."),
        Opt(
            "--depends-on",
            dest="depends_on",
            multiple=True,
            metavar="STEP",
            help="A step it waits on.",
        ),
        Opt(
            "--after",
            dest="after",
            metavar="STEP",
            help="Insert after this step (default: at the end).",
        ),
        Opt("--note", dest="note", tool="text", help="A note on the step."),
    ),
    "plan decision": (_PLAN, Arg("text", help="The decision taken.")),
}
