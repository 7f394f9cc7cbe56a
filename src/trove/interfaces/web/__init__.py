"""The web page at ``/``: routes (:mod:`.routes`), rendering (:mod:`.views`) and the
templates and stylesheet (``assets/``)."""
