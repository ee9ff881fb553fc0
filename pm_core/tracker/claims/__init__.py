"""Claims and leases, in the item file or on the git remote."""
