"""Images and PDFs: their type by content, downscaling and reading, and which models read them (each
fitted to the wire an attempt goes to by :mod:`colibri_router.router.fit`)."""
