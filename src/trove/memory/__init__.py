"""Agent memories: their use (access counts), canonical duplicates, clusters, and the
entry control and memory fields of one write. General operations are in trove.operations."""
