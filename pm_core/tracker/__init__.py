"""The tracker SDK and its layers: model, storage, query, index, ops, claims, merge.

:class:`pm_core.tracker.api.Tracker` is the one entry point; the sub-packages
depend on each other one way only (see ``docs/architecture.md``).
"""
