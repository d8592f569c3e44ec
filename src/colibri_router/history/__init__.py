"""The router_threads and router_usage services: a caller's stored threads and usage totals."""
