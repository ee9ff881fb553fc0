"""Files on disk: item files (TOON), the workspace, locks and history. Imports only ``model``."""
