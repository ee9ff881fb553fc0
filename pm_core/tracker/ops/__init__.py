"""Write operations beyond the item core: admin, plans, linked tests, focus."""
