"""Item commands, declared: create, update, copy, append, delete, init.

``FIELD_OPTS`` are the item-field parameters of ``pm create`` and
``pm update`` (and the option bag of ``pm_create``/``pm_update``): the common
ones by hand, the rest generated from the SDK's settable fields, so a new
field needs no CLI or tool change. Values go to the SDK as given; it
validates and normalises them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.params import Arg, Opt, Param
from pm_core.tracker.model.fields import SETTABLE
from pm_core.tracker.model.item import COLLECTION_FIELDS, FIELD_ORDER

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

#: Tag edits of ``update``, shared with ``update-many``.
TAG_EDITS: tuple[Opt, ...] = (
    Opt(
        "--add-tag",
        dest="add_tag",
        multiple=True,
        tool="addTags",
        help="Add tags (comma separated); repeatable.",
    ),
    Opt(
        "--remove-tag",
        dest="remove_tag",
        multiple=True,
        tool="removeTags",
        help="Remove tags; repeatable.",
    ),
)

#: What a generated field takes, where it is a fixed set or a type (else free text).
_FIELD_VALUES: dict[str, tuple[tuple[str, ...] | None, str]] = {
    "risk": (("low", "medium", "high", "critical"), "Risk."),
    "confidence": (None, "Confidence: 0-100, low, medium or high."),
    "regression": (("true", "false"), "Whether it is a regression."),
    "order": (None, "Rank among siblings (an integer)."),
}


def _generated(key: str, flag: str) -> Opt:
    choices, help = _FIELD_VALUES.get(key, (None, f"{key.replace('_', ' ').capitalize()} (text)."))
    return Opt(
        flag,
        dest=key,
        metavar="TEXT" if choices is None else None,
        choices=choices,
        role="field",
        compact=False,
        help=help,
    )


#: Fields with hand-written flags, or set only through their own commands.
_NOT_GENERATED = frozenset(
    {
        "title",
        "description",
        "type",
        "status",
        "priority",
        "tags",
        "parent",
        "acceptance_criteria",
        "body",
        "deadline",
        "estimated_minutes",
        "assignee",
        "author",
        "close_reason",
        "duplicate_of",
        "type_options",
        "plan_status",
        "plan_validation",
        *COLLECTION_FIELDS,
    }
)

#: Generated flags, in file order: field name -> flag.
GENERATED: dict[str, str] = {
    key: "--" + key.replace("_", "-")
    for key in FIELD_ORDER
    if key in SETTABLE and key not in _NOT_GENERATED
}

#: Every field flag, hand-written ones first (their order is the help's).
FIELD_OPTS: tuple[Opt, ...] = (
    Opt("--title", "-t", dest="title", role="field", help="Title."),
    Opt("--description", "-d", dest="description", role="field", help="One-paragraph description."),
    Opt("--type", dest="type", role="field", choices="types", help="Item type (default Task)."),
    Opt("--status", dest="status", role="field", choices="statuses", help="Status."),
    Opt("--priority", "-p", dest="priority", role="field", choices="priorities", help="Priority."),
    Opt(
        "--tags",
        dest="tags",
        multiple=True,
        role="field",
        help="Tags, comma separated; repeatable.",
    ),
    Opt("--parent", dest="parent", metavar="ID", role="field", help="Parent item."),
    Opt(
        "--dep",
        dest="dependencies",
        multiple=True,
        role="field",
        tool="deps",
        metavar="ID[:KIND]",
        help="Dependency (kind blocked_by unless given); repeatable.",
    ),
    Opt(
        "--ac",
        "--acceptance-criteria",
        dest="acceptance_criteria",
        multiple=True,
        role="field",
        help="An acceptance criterion; repeatable.",
    ),
    Opt("--deadline", dest="deadline", role="field", help="ISO date/time or +1d, +4h, +2w."),
    Opt(
        "--estimate",
        "--estimated-minutes",
        dest="estimated_minutes",
        kind="int",
        minimum=0,
        role="field",
        help="Minutes.",
    ),
    Opt("--assignee", dest="assignee", metavar="NAME", role="field", help="Assignee."),
    Opt("--body", dest="body", role="field", help="Body text (markdown)."),
    Opt(
        "--body-file",
        dest="body_file",
        metavar="FILE",
        role="io",
        help="Read the body from FILE (- is stdin).",
    ),
    Opt(
        "--field",
        dest="custom",
        multiple=True,
        metavar="KEY=VALUE",
        role="io",
        help="A custom field (declared with `pm schema add field`); repeatable.",
    ),
    Opt(
        "--stdin-json",
        dest="stdin_json",
        kind="flag",
        role="io",
        help="Read field values as a JSON object.",
    ),
    Opt(
        "--allow-unresolved-deps",
        dest="allow_unresolved_deps",
        kind="flag",
        help="Allow links to ids that do not exist.",
    ),
    *(_generated(key, flag) for key, flag in GENERATED.items()),
)


MESSAGE = Opt("--message", "-m", dest="message", help="A note recorded in history.")
ITEM = Arg("item_id", help="The item's id (prefix optional).")


def init(
    tracker: Tracker, prefix: str | None, id_prefix: str | None, no_merge_fence: bool = False
) -> dict[str, Any]:
    """Create the tracker (idempotent): what was created, the prefix, and what to run next."""
    from pm_core.tracker.model.errors import UsageError

    if prefix and id_prefix and prefix != id_prefix:
        raise UsageError("two different prefixes given", hint="pass PREFIX or --id-prefix")
    result = tracker.init(prefix or id_prefix, merge_fence=not no_merge_fence)
    result["id_prefix"] = tracker.prefix
    result["next_steps"] = [
        'pm create --title "..." --description "..."',
        "pm list",
        "pm next",
    ]
    return result


def delete(tracker: Tracker, item_id: str) -> dict[str, Any]:
    """Delete an item (its history is kept)."""
    return tracker.delete(item_id)


PARAMS: dict[str, tuple[Param, ...]] = {
    "create": (
        Arg("title_arg", required=False, metavar="[TYPE-OR-TITLE]", tool=None),
        Arg("second_arg", required=False, metavar="[TITLE]", tool=None),
        *FIELD_OPTS,
        MESSAGE,
    ),
    "update": (
        ITEM,
        *(
            Opt(*opt.decls[:1], "-t", dest="title", role="field", help="New title.")
            if opt.dest == "title"
            else opt
            for opt in FIELD_OPTS
        ),
        *TAG_EDITS,
        Opt(
            "--dep-remove",
            dest="dep_remove",
            multiple=True,
            metavar="ID[:KIND]",
            tool="removeDeps",
            help="Remove a dependency; repeatable.",
        ),
        Opt(
            "--unset",
            dest="unset",
            multiple=True,
            metavar="FIELD",
            help="Clear a field; repeatable.",
        ),
        Opt("--reason", "-r", dest="reason", help="Close reason, when --status closes the item."),
        MESSAGE,
    ),
    "init": (
        Arg("prefix", required=False, help="Id prefix (default pm-)."),
        Opt("--id-prefix", dest="id_prefix", metavar="PREFIX", help="Id prefix (default pm-)."),
        Opt(
            "--no-merge-fence",
            dest="no_merge_fence",
            kind="flag",
            help="Do not install the git merge drivers (another tool owns git merge config).",
        ),
    ),
    "delete": (ITEM,),
    "copy": (
        ITEM,
        Opt("--title", "-t", dest="title", help="Title of the copy (default: Copy of ...)."),
    ),
    "append": (
        ITEM,
        Arg("text", required=False, help="The paragraph to append."),
        Opt("--stdin", dest="stdin", kind="flag", role="io", help="Read the text from stdin."),
        Opt(
            "--body-file",
            dest="body_file",
            metavar="FILE",
            role="io",
            help="Read the text from FILE.",
        ),
    ),
}

#: Command -> the function both doors call with its declared values (``pm_run`` runs these).
ACTIONS = {"init": init, "delete": delete}
