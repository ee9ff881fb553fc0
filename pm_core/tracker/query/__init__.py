"""Reads over the whole tracker: views, listing, search, ranking, graph, validate. Imports ``storage`` and ``model``; reaches the read index only through what ``Tracker`` hands it."""
