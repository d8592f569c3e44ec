"""The router_models service: which providers and models exist."""
