"""The engine below the services: one attempt's request to the model (the pipeline, its runners, the HTTP
exchange, retries, deadlines), and how a failure is classified."""
