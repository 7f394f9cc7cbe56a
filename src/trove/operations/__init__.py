"""General operations on what a store holds, each given the parts it needs (protocols in
trove.parts), not the store: transactions, a document's lifecycle (delete, restore, purge,
clear), upsert modes, chunks a caller cuts, typed links, vectors a caller brings, listing
and counting, and cutting stored documents again."""
