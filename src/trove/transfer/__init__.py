"""Moving data in and out of a store: JSONL export/import, Markdown vaults, backups and
importers for other tools' exports."""
