"""Images and PDFs: their type, which models read them, and each fitted to the wire before it is sent."""
