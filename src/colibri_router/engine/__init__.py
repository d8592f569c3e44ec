"""One HTTP exchange with an upstream: the clients, the request and its answer or stream, and which
``kind`` a failure is."""
