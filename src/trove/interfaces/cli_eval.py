"""`trove eval`: placeholder, filled in by its issue."""
