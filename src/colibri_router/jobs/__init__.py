"""Jobs: a long ``router_call``, ``router_ask_many`` or ``router_run`` that outlives the host's patience.

With ``background: "auto"`` (the default) a call still running after ``COLIBRI_HANDOFF_S`` seconds
answers a job handle (:class:`.model.JobHandle`) and keeps running; ``true`` answers the handle at
once; ``false`` never hands off. ``router_job`` waits for a job, cancels it, or lists the caller's
jobs, and a finished job answers exactly the result the call would have (success or error).

- :mod:`.model`: the handle, the listing and ``router_job``'s input.
- :mod:`.runner`: runs a call as a job in this process, hands it off, records its progress, cost
  and final result in the store, and stops it on cancel or shutdown.
- :mod:`.follow`: ``router_job`` and ``colibri-router jobs``: waiting for, cancelling and listing
  jobs from any process on the same store.
- :mod:`.memory`: the jobs of a process whose store is off (``COLIBRI_STORE=off``).
- :mod:`.owners`: which process runs a job, and whether it is gone.
- :mod:`.spending`: how a job learns the cost of each ledger row its calls write.
- :mod:`.errors`: JOB_NOT_FOUND, JOB_CANCELLED, SERVER_STOPPED.
- :mod:`.detached`: `call --background`, the work in a process of its own.

The rows live in the store (:mod:`colibri_router.store.jobs`). This package never imports ``mcp``:
the shell turns results into :class:`.model.Final` and back (:mod:`colibri_router.server.handoff`).
"""
