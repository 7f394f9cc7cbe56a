"""`trove migrate`: placeholder, filled in by its issue."""
