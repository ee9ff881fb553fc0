"""Branch merge safety: git merge drivers and reconciliation."""
