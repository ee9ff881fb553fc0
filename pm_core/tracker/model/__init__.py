"""The item model: fields, entries, ordering, time stamps and errors. Imports nothing else of the tracker."""
