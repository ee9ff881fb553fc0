"""The per-tracker file watcher (Linux inotify) that tells the index what changed."""
