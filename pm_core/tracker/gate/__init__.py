"""The command gate: which processes pm may start, and this clone's approvals.

:mod:`~pm_core.tracker.gate.execution` is the one place every linked command
and every extension handler passes before a process starts;
:mod:`~pm_core.tracker.gate.approvals` keeps the clone-local record of the
command texts this clone approved. Both sit just above ``model`` so every
layer that starts a process (claims, index, ops) can reach them.
"""
