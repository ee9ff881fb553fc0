"""The canonical pm Agent Skills, shipped in the wheel as ``pm_core._skills``.

Each sub-directory is one skill (``SKILL.md`` plus ``references/``). The
``skills_sep2640`` plugin serves them over MCP; nothing here is imported for
its code.
"""
