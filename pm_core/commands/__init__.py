"""The built-in commands' declarations: parameters, and what each command does.

``pm_core.commands.<module>.PARAMS`` declares each command's parameters once
(see :mod:`pm_core.params`); the module is named like the command's CLI module
in the capability table. The CLI and the MCP tools both read these and call the
functions beside them, so an option cannot exist on one side only.
"""
