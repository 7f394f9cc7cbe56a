"""Adapters that let frameworks use a trove store: LangChain (``trove[langchain]``) and
LlamaIndex (``trove[llamaindex]``). Each module imports its framework lazily."""
