"""The ``pm`` commands, one module per family of commands."""
