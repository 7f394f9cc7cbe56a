"""`trove serve`: placeholder, filled in by its issue."""
