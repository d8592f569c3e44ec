"""The router_ask_many service: its input and result models, the judge and the progress it reports."""
