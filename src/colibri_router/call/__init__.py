"""The router_call service: its input and result models, the files read into it, and the call around the router."""
