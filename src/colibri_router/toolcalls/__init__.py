"""Tool-call machinery shared by the adapters: argument parsing, IDs, K2 markers, stream assembly."""
