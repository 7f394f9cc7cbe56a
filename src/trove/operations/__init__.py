"""General operations on what a store holds, each given the parts it needs (protocols in
trove.parts), not the store: transactions, a document's lifecycle (delete, restore, purge,
clear), upsert modes, typed links, and vectors a caller brings."""
