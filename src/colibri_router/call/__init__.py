"""The router_call service: the router, with threads, the usage ledger and budgets around it (its input and
result models, which every service and the router speak, are :mod:`colibri_router.schema`)."""
