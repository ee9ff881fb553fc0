"""The rebuildable SQLite read index that answers reads at scale."""
